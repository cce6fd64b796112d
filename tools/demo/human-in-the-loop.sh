#!/usr/bin/env bash
# The human-in-the-loop walk-through of docs/agents.md: runs against a server at $URL (default
# http://127.0.0.1:8714) whose workspace defines the agent `careful` (interrupt_on: execute) and
# whose model is tools/demo/fake-provider.mjs. Prints each command with its output. Needs curl, jq.
set -euo pipefail
URL=${URL:-http://127.0.0.1:8714}
run() { printf '$ %s\n' "$*"; eval "$@"; printf '\n'; }
# The SSE frames of a stream, one line each: `<event> <data>` (ids shortened to their sequence).
frames() { awk '/^id: /{id=$2; sub(/.*:/,"",id)} /^event: /{ev=$2} /^data: /{sub(/^data: /,""); print "#" id+0, ev, $0}'; }

printf '$ ID=$(curl -s -X POST $URL/sessions -d %s | jq -r .id)\n' "'{\"agent_name\":\"careful\"}'"
ID=$(curl -s -X POST "$URL/sessions" -d '{"agent_name":"careful"}' | jq -r .id)
echo "# ID=$ID"; echo
echo '# the model calls execute: the run pauses before it runs, and the stream ends with `interrupt`'
run "curl -sN -X POST \"\$URL/sessions/\$ID/messages\" -d '{\"content\":\"Please run \`echo approved-by-a-person\`\"}' | frames"
RUN=$(curl -s "$URL/sessions/$ID/runs?status=requires_action" | jq -r '.runs[0].id')
CALL=$(curl -s "$URL/sessions/$ID/runs?status=requires_action" | jq -r '.runs[0].pending_action.tool_calls[0].id')
echo '# the paused run, as any client finds it'
run "curl -s \"\$URL/sessions/\$ID/runs?status=requires_action\" | jq -c '.runs[] | {id, status, pending_action}'"
echo '# a new message meanwhile is refused, naming the run to resume'
run "curl -s -X POST \"\$URL/sessions/\$ID/messages\" -d '{\"content\":\"hello?\"}' | jq -c '{code, detail}'"
echo '# a decision the tool does not allow is a 422 naming it'
run "curl -s -X POST \"\$URL/sessions/\$ID/runs/$RUN/resume\" -d '{\"decisions\":[{\"tool_call_id\":\"$CALL\",\"type\":\"edit\",\"args\":{\"command\":\"ls\"}}]}' | jq -c '{code, errors}'"
echo '# approve: the same run goes on (ids continue after the interrupt), the command runs'
run "curl -sN -X POST \"\$URL/sessions/\$ID/runs/$RUN/resume\" -d '{\"decisions\":[{\"tool_call_id\":\"$CALL\",\"type\":\"approve\"}]}' | frames"
echo '# reject: the model gets the message as the tool result; nothing runs'
curl -sN -X POST "$URL/sessions/$ID/messages" -d '{"content":"Now run `rm -rf build`"}' > /dev/null
RUN=$(curl -s "$URL/sessions/$ID/runs?status=requires_action" | jq -r '.runs[0].id')
CALL=$(curl -s "$URL/sessions/$ID/runs?status=requires_action" | jq -r '.runs[0].pending_action.tool_calls[0].id')
echo "# (sent \"Now run \`rm -rf build\`\"; it paused as run $RUN)"
run "curl -sN -X POST \"\$URL/sessions/\$ID/runs/$RUN/resume\" -d '{\"decisions\":[{\"tool_call_id\":\"$CALL\",\"type\":\"reject\",\"message\":\"Do not delete build/: it is shared.\"}]}' | frames"
run "curl -s \"\$URL/sessions/\$ID/messages?order=asc\" | jq -c '.messages[] | [.role, .content, (.tool_calls | map(.args.command))]'"
