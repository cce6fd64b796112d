#!/usr/bin/env bash
# Makes a Chromium the dashboard's browser tests can drive (through playwright-core) available,
# idempotently (contract in README.md):
#   - COGNITION_TEST_CHROMIUM set: that executable is used as given. It runs -> done; it does
#     not -> fail with the reason. Nothing is installed.
#   - otherwise /usr/bin/chromium: runs -> done; missing -> install Debian's chromium (root).
# Playwright's own browser download does not work without its CDN, so the system package it is.
set -euo pipefail

service=chromium
# shellcheck source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
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
apt_install chromium "${provide}"
version="$(version_of "${binary}" || true)"
[[ -n "${version}" ]] || fail "chromium was installed but does not run" "${binary} --version" "${provide}"
say "installed: ${version} at ${binary}"
