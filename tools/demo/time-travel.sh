#!/usr/bin/env bash
# The time-travel walk-through of docs/sessions.md: runs against a server at $URL (default
# http://127.0.0.1:8714) and prints each command with its output. Needs curl and jq.
set -euo pipefail
URL=${URL:-http://127.0.0.1:8714}
run() { printf '$ %s\n' "$*"; eval "$@"; printf '\n'; }
turn() { curl -sN -X POST "$URL/sessions/$1/messages" -H 'Content-Type: application/json' -d "{\"content\":\"$2\"}" | grep -A1 '^event: done' | sed -n 's/^data: //p' | jq -c '{assistant: .assistant_data.content}'; }
msgs() { curl -s "$URL/sessions/$1/messages?order=asc" | jq -c '.messages[] | [.role, .content]'; }

printf '$ ID=$(curl -s -X POST $URL/sessions -d %s | jq -r .id)\n' "'{\"title\":\"travel\"}'"
ID=$(curl -s -X POST "$URL/sessions" -d '{"title":"travel"}' | jq -r .id)
echo "# ID=$ID"; echo
echo '# two turns (only the final `done` event of each stream is shown)'
run "turn \$ID 'What is 2+2?'"
run "turn \$ID 'And times 3?'"
echo '# the history: newest checkpoint first'
run "curl -s \"\$URL/sessions/\$ID/history\" | jq -c '.checkpoints[] | {checkpoint_id, step, message_count, last_message_preview}'"
ORIGINAL_SECOND=$(curl -s "$URL/sessions/$ID/history" | jq -r '.checkpoints[0].checkpoint_id')
FIRST_ANSWER=$(curl -s "$URL/sessions/$ID/messages?order=asc" | jq -r '.messages[1].id')
echo "# ORIGINAL_SECOND=$ORIGINAL_SECOND (the head after the second turn)"
echo "# FIRST_ANSWER=$FIRST_ANSWER (the assistant message of the first turn)"; echo
echo '# rewind to after the first turn'
run "curl -s -X POST \"\$URL/sessions/\$ID/rewind\" -d '{\"message_id\":\"'\$FIRST_ANSWER'\"}' | jq -c '{version, message_count}'"
echo '# a different second turn: the model is shown the shortened history'
run "turn \$ID 'And minus 1?'"
echo '# fork from the original second turn'
run "FORK=\$(curl -s -X POST \"\$URL/sessions/\$ID/fork\" -d '{\"checkpoint_id\":\"'\$ORIGINAL_SECOND'\",\"title\":\"original\"}' | jq -r .id); echo \$FORK"
echo '# both sessions'"'"' message lists (order=asc: thread order; REST defaults to newest first)'
run "msgs \$ID"
run "msgs \$FORK"
run "curl -s \"\$URL/sessions/\$FORK\" | jq -c '{id, parent_id, title, message_count}'"
echo '# what happened to the session, newest first'
run "curl -s \"\$URL/sessions/\$ID/activity?limit=6\" | jq -c '.entries[] | [.type, .action, .version_before, .version_after]'"
