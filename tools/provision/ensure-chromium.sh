#!/usr/bin/env bash
# Makes a Chromium the dashboard's browser tests can drive (through playwright-core) available,
# idempotently (contract in README.md):
#   - COGNITION_TEST_CHROMIUM set: that executable is used as given. It runs -> done; it does
#     not -> fail with the reason. Nothing is installed.
#   - otherwise /usr/bin/chromium: runs -> done; missing -> install Debian's chromium (root).
# Playwright's own browser download does not work without its CDN, so the system package it is.
set -euo pipefail

service=chromium
say() { printf '%s: %s\n' "${service}" "$*"; }
fail() { # what, tried, how to provide it
  printf '%s: UNAVAILABLE — %s\n  tried: %s\n  to provide it: %s\n' "${service}" "$1" "$2" "$3" >&2
  exit 1
}
provide="set COGNITION_TEST_CHROMIUM to a Chromium or Chrome executable, or install Debian's chromium package"
version_of() { "$1" --headless --no-sandbox --disable-gpu --version 2>/dev/null | head -n 1; }

if [[ -n "${COGNITION_TEST_CHROMIUM:-}" ]]; then
  version="$(version_of "${COGNITION_TEST_CHROMIUM}" || true)"
  [[ -n "${version}" ]] || fail "COGNITION_TEST_CHROMIUM=${COGNITION_TEST_CHROMIUM} does not run" \
    "${COGNITION_TEST_CHROMIUM} --version (the suite never installs a browser when pointed at one)" \
    "fix the path, or unset it to let \`npm test\` install Debian's chromium"
  say "ready: ${version} at ${COGNITION_TEST_CHROMIUM} (from COGNITION_TEST_CHROMIUM)"
  exit 0
fi

binary=/usr/bin/chromium
if [[ -x "${binary}" ]] && version="$(version_of "${binary}")" && [[ -n "${version}" ]]; then
  say "ready: ${version} at ${binary} (already installed)"
  exit 0
fi
[[ "$(id -u)" == 0 ]] || fail "${binary} is missing and installing it needs root" "test -x ${binary}" "${provide}"
command -v apt-get >/dev/null 2>&1 || fail "${binary} is missing and there is no apt-get" "test -x ${binary}; command -v apt-get" "${provide}"
say "installing Debian's chromium (apt-get, about a minute the first time)"
export DEBIAN_FRONTEND=noninteractive
if ! { apt-get install -y -qq --no-install-recommends chromium >/dev/null 2>&1 \
  || { apt-get update -qq && apt-get install -y -qq --no-install-recommends chromium >/dev/null; }; } 2>/tmp/cognition-apt-chromium.log; then
  fail "installing chromium failed ($(tail -n 1 /tmp/cognition-apt-chromium.log))" "apt-get install chromium" "${provide}"
fi
version="$(version_of "${binary}" || true)"
[[ -n "${version}" ]] || fail "chromium was installed but does not run" "${binary} --version" "${provide}"
say "installed: ${version} at ${binary}"
