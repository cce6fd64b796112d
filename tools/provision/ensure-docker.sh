#!/usr/bin/env bash
# Makes a Docker engine with the sandbox image available to the test suite, idempotently (contract
# in README.md):
#   - DOCKER_HOST set: that engine is used as given. It answers -> only the image is checked (and
#     built if absent); it does not -> fail with the reason. This machine's daemon is left alone.
#   - otherwise the local socket: answers -> image check; dockerd missing -> install Debian's
#     docker.io (root); dockerd not running -> start it in the background (root) and wait.
#   - then tools/sandbox/build-image.sh, which returns at once when the image exists.
# `--stop` stops the dockerd this script started (by the pid file it recorded), nothing else.
#
# Environment: DOCKER_HOST (an existing engine), COGNITION_DOCKER_IMAGE (image name),
# DOCKERD_LOG (default /var/log/cognition-dockerd.log), DOCKER_WAIT_SECONDS (default 60).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
service=docker
say() { printf '%s: %s\n' "${service}" "$*"; }
fail() { # what, tried, how to provide it
  printf '%s: UNAVAILABLE — %s\n  tried: %s\n  to provide it: %s\n' "${service}" "$1" "$2" "$3" >&2
  exit 1
}

dockerd_log="${DOCKERD_LOG:-/var/log/cognition-dockerd.log}"
wait_seconds="${DOCKER_WAIT_SECONDS:-60}"
# Where this script records the daemon it started, so `--stop` never kills someone else's.
started_pid_file="${TMPDIR:-/tmp}/cognition-dockerd.pid"
provide="point DOCKER_HOST at a running engine (unix:///path/docker.sock or tcp://host:2375), or install and start Docker yourself"

if [[ "${1:-}" == --stop ]]; then
  if [[ -f "${started_pid_file}" ]] && kill -0 "$(cat "${started_pid_file}")" 2>/dev/null; then
    pid="$(cat "${started_pid_file}")"
    kill "${pid}"
    for _ in $(seq 1 30); do kill -0 "${pid}" 2>/dev/null || break; sleep 1; done
    rm -f "${started_pid_file}"
    say "stopped the dockerd this script started (pid ${pid})"
  else
    say "no dockerd started by this script is running"
  fi
  exit 0
fi

command -v docker >/dev/null 2>&1 || [[ "$(id -u)" == 0 ]] \
  || fail "the docker CLI is not installed and this is not root" "command -v docker" "${provide}"

engine_answers() { command -v docker >/dev/null 2>&1 && docker info >/dev/null 2>&1; }
engine_version() { docker version --format '{{.Server.Version}}' 2>/dev/null || echo '?'; }

if [[ -n "${DOCKER_HOST:-}" ]]; then
  engine_answers || fail "DOCKER_HOST=${DOCKER_HOST} does not answer ($(docker info 2>&1 | grep -m1 -i error || true))" \
    "docker info against DOCKER_HOST (the suite never starts a daemon when pointed at one)" \
    "start that engine or fix DOCKER_HOST; unset it to let \`npm test\` start a local dockerd"
  say "engine answers at ${DOCKER_HOST} ($(engine_version), from DOCKER_HOST)"
elif engine_answers; then
  say "engine answers ($(engine_version), already running)"
else
  if ! command -v dockerd >/dev/null 2>&1; then
    [[ "$(id -u)" == 0 ]] || fail "dockerd is not installed and installing it needs root" "command -v dockerd" "${provide}"
    command -v apt-get >/dev/null 2>&1 || fail "dockerd is not installed and there is no apt-get to install it" "command -v dockerd; command -v apt-get" "${provide}"
    say "installing Debian's docker.io (apt-get, about a minute the first time)"
    export DEBIAN_FRONTEND=noninteractive
    # Recommends (apparmor, git, ...) are not needed to run containers.
    if ! { apt-get update -qq && apt-get install -y -qq --no-install-recommends docker.io >/dev/null; } 2>/tmp/cognition-apt.log; then
      fail "installing docker.io failed ($(tail -n 1 /tmp/cognition-apt.log))" "apt-get install docker.io" "${provide}"
    fi
  fi
  if pgrep -x dockerd >/dev/null 2>&1; then
    say "dockerd is running but does not answer yet; waiting up to ${wait_seconds}s"
  else
    [[ "$(id -u)" == 0 ]] || fail "dockerd is not running and starting it needs root" "pgrep dockerd" "${provide}"
    say "starting dockerd in the background (log ${dockerd_log}; stop: bash tools/provision/ensure-docker.sh --stop)"
    # setsid + nohup: the daemon must outlive this script and the test run that called it.
    setsid nohup dockerd >>"${dockerd_log}" 2>&1 </dev/null &
    echo $! >"${started_pid_file}"
  fi
  deadline=$((SECONDS + wait_seconds))
  until engine_answers; do
    ((SECONDS < deadline)) || fail "the engine did not answer within ${wait_seconds}s: $(tail -n 3 "${dockerd_log}" 2>/dev/null | tr '\n' ' ')" \
      "dockerd (log ${dockerd_log})" "${provide}"
    sleep 1
  done
  say "engine answers ($(engine_version), started)"
fi

# The image: build-image.sh returns at once when it exists; its own errors name what was missing.
"${here}/../sandbox/build-image.sh" 2>&1 | sed "s/^/${service}: /" || fail "building the sandbox image failed" \
  "tools/sandbox/build-image.sh" "build it yourself (see tools/sandbox/README) or set COGNITION_DOCKER_IMAGE to an existing image"
