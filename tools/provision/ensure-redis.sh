#!/usr/bin/env bash
# Makes the Redis the multi-node tests use available, idempotently (contract in README.md):
#   - COGNITION_TEST_REDIS_URL set: that Redis is used as given. It answers PING -> done; it
#     does not -> fail with the reason. Nothing is started.
#   - otherwise 127.0.0.1:6379: answers -> done; else start Debian's redis-server there as a
#     daemon (installing the package first when missing, as root), in memory only.
#   - `--stop`: shuts down a Redis this script started (the pid file below), nothing else.
set -euo pipefail

service=redis
# shellcheck source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
provide="set COGNITION_TEST_REDIS_URL to a reachable Redis (redis://host:port), or install Debian's redis-server"
pidfile="/tmp/cognition-test-redis-$(id -u).pid"

ping_url() { # url -> PONG or nothing
  local url="$1" rest host port
  rest="${url#redis://}"
  rest="${rest##*@}"
  rest="${rest%%/*}"
  host="${rest%%:*}"
  port="${rest##*:}"
  [[ "${port}" == "${rest}" ]] && port=6379
  # Plain RESP over bash's /dev/tcp: no client needed to check.
  timeout 3 bash -c "exec 3<>/dev/tcp/${host}/${port} && printf 'PING\r\n' >&3 && head -c 7 <&3" 2>/dev/null | tr -d '\r\n+'
}

if [[ "${1:-}" == "--stop" ]]; then
  if [[ -f "${pidfile}" ]]; then
    kill "$(cat "${pidfile}")" 2>/dev/null || true
    rm -f "${pidfile}"
    say "stopped"
  else
    say "nothing to stop (not started by this script)"
  fi
  exit 0
fi

if [[ -n "${COGNITION_TEST_REDIS_URL:-}" ]]; then
  # Credentials in the URL are never printed.
  masked="$(printf '%s' "${COGNITION_TEST_REDIS_URL}" | sed -E 's#//[^@/]*@#//***@#')"
  [[ "$(ping_url "${COGNITION_TEST_REDIS_URL}")" == "PONG" ]] || fail \
    "COGNITION_TEST_REDIS_URL does not answer PING" \
    "PING on ${masked} (the suite never starts a Redis when pointed at one)" \
    "start that Redis, or unset the variable to let \`npm test\` start one on 127.0.0.1:6379"
  say "ready: answers at COGNITION_TEST_REDIS_URL"
  exit 0
fi

url=redis://127.0.0.1:6379
if [[ "$(ping_url "${url}")" == "PONG" ]]; then
  say "ready: answers at ${url} (already running)"
  exit 0
fi
command -v redis-server >/dev/null 2>&1 || apt_install redis-server "${provide}"
log="/tmp/cognition-test-redis-$(id -u).log"
redis-server --daemonize yes --bind 127.0.0.1 --port 6379 --save '' --appendonly no \
  --pidfile "${pidfile}" --logfile "${log}" --dir /tmp >/dev/null 2>&1 \
  || fail "redis-server did not start ($(tail -n 1 "${log}" 2>/dev/null))" "redis-server --port 6379" "${provide}"
for _ in $(seq 1 50); do
  [[ "$(ping_url "${url}")" == "PONG" ]] && { say "started: ${url} (in memory, pid file ${pidfile})"; exit 0; }
  sleep 0.1
done
fail "redis-server started but does not answer on 127.0.0.1:6379" "PING ${url}" "${provide}"
