#!/usr/bin/env bash
# The schedules walk-through of docs/schedules.md: runs against a server at $URL (default
# http://127.0.0.1:8714) and prints each command with its output. Needs curl and jq.
set -euo pipefail
URL=${URL:-http://127.0.0.1:8714}
run() { printf '$ %s\n' "$*"; eval "$@"; printf '\n'; }

echo '# a bad expression: 422 naming the field'
run "curl -s -X POST \"\$URL/schedules\" -H 'Content-Type: application/json' -d '{\"schedule\":\"0 0 32 * *\",\"target\":{\"kind\":\"new_session\"},\"content\":\"x\"}' | jq -c ."
echo '# every 2 seconds, a new session per firing'
run "SCH=\$(curl -s -X POST \"\$URL/schedules\" -H 'Content-Type: application/json' -d '{\"schedule\":\"*/2 * * * * *\",\"timezone\":\"Europe/Berlin\",\"target\":{\"kind\":\"new_session\",\"agent_name\":\"default\"},\"content\":\"Summarise the day\",\"metadata\":{\"team\":\"ops\"}}' | jq -r .id); echo \$SCH"
run "curl -s \"\$URL/schedules/\$SCH\" | jq -c '{kind, schedule, timezone, enabled, misfire, multitask_strategy, next_fire_at}'"
run "sleep 5"
echo '# its firings, newest first, each with its run'
run "curl -s \"\$URL/schedules/\$SCH/runs\" | jq -c '.runs[] | {due_at, reason, node_id, run: .run.status}'"
echo '# disable it; list with filters'
run "curl -s -X PATCH \"\$URL/schedules/\$SCH\" -H 'Content-Type: application/json' -d '{\"enabled\":false}' | jq -c '{enabled, next_fire_at}'"
run "curl -s \"\$URL/schedules?enabled=false&metadata.team=ops\" | jq -c '{total, ids: [.schedules[].id]}'"
echo '# a reminder in an existing session, in an hour; or right now'
run "SES=\$(curl -s -X POST \"\$URL/sessions\" -H 'Content-Type: application/json' -d '{\"title\":\"reminders\"}' | jq -r .id)"
run "REM=\$(curl -s -X POST \"\$URL/schedules\" -H 'Content-Type: application/json' -d '{\"after_seconds\":3600,\"target\":{\"kind\":\"session\",\"session_id\":\"'\$SES'\"},\"content\":\"Remind me of the open questions\"}' | jq -r .id); echo \$REM"
run "curl -s -X POST \"\$URL/schedules/\$REM/trigger\" | jq -c '{reason, session_id, run: .run.status}'"
run "curl -s -X DELETE \"\$URL/schedules/\$SCH\" -o /dev/null -w '%{http_code}\n'"
