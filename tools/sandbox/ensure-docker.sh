#!/usr/bin/env bash
# Provisions what the docker sandbox backend (and its integration tests) need, idempotently:
#   1. a Docker engine: installs docker.io from Debian's archive when dockerd is missing, starts
#      dockerd in the background when `docker info` fails, and waits (bounded) until it answers;
#   2. the sandbox image: runs build-image.sh, which skips the build when the image exists.
# Safe to run repeatedly (the lead's .ci/run calls it on every CI run). Needs root on a fresh
# machine (package install, daemon start); on a machine where the engine already answers it only
# checks the image.
#
# Environment:
#   DOCKERD_LOG           where dockerd's output goes (default /var/log/cognition-dockerd.log)
#   DOCKER_WAIT_SECONDS   how long to wait for the engine to answer (default 60)
#   Any argument is passed on to build-image.sh (e.g. --force, --debootstrap).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
log() { printf '[ensure-docker] %s\n' "$*" >&2; }

dockerd_log="${DOCKERD_LOG:-/var/log/cognition-dockerd.log}"
wait_seconds="${DOCKER_WAIT_SECONDS:-60}"

engine_answers() { docker info >/dev/null 2>&1; }

if engine_answers; then
  log "engine already answers ($(docker version --format '{{.Server.Version}}' 2>/dev/null || echo '?'))"
else
  if ! command -v dockerd >/dev/null 2>&1; then
    if [[ "$(id -u)" != 0 ]]; then
      log "dockerd is not installed and this is not root: install docker.io (or start an engine) first"
      exit 1
    fi
    log "installing docker.io (apt-get update + install, takes a minute the first time)"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    # Recommends (apparmor, git, ...) are not needed to run containers.
    apt-get install -y -qq --no-install-recommends docker.io >/dev/null
  fi
  if ! command -v docker >/dev/null 2>&1; then
    log "the docker CLI is missing even though dockerd exists"
    exit 1
  fi
  if [[ -n "${DOCKER_HOST:-}" ]]; then
    log "DOCKER_HOST=${DOCKER_HOST} does not answer; starting a local dockerd (socket /var/run/docker.sock) anyway"
  fi
  if pgrep -x dockerd >/dev/null 2>&1; then
    log "dockerd is already running but does not answer yet; waiting"
  else
    if [[ "$(id -u)" != 0 ]]; then
      log "dockerd must be started as root"
      exit 1
    fi
    log "starting dockerd in the background (log: ${dockerd_log})"
    # setsid + nohup: the daemon must outlive this script and the CI step that ran it.
    setsid nohup dockerd >>"${dockerd_log}" 2>&1 </dev/null &
  fi
  deadline=$((SECONDS + wait_seconds))
  until engine_answers; do
    if ((SECONDS >= deadline)); then
      log "the engine did not answer within ${wait_seconds}s; last lines of ${dockerd_log}:"
      tail -n 30 "${dockerd_log}" >&2 || true
      exit 1
    fi
    sleep 1
  done
  log "engine answers ($(docker version --format '{{.Server.Version}}' 2>/dev/null || echo '?'))"
fi

exec "${here}/build-image.sh" "$@"
