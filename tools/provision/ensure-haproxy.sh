#!/usr/bin/env bash
# Makes HAProxy (the real load balancer of the multi-node tests) available, idempotently
# (contract in README.md). The tests start their own haproxy processes with a generated
# configuration; this script only makes sure the binary is there.
#   - COGNITION_TEST_HAPROXY set: that executable is used as given; it must run.
#   - otherwise /usr/sbin/haproxy: runs -> done; missing -> install Debian's haproxy (root).
#     The package's own service is not started.
set -euo pipefail

service=haproxy
# shellcheck source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
provide="set COGNITION_TEST_HAPROXY to an haproxy executable, or install Debian's haproxy package"
version_of() { "$1" -v 2>/dev/null | sed -n 1p; }

if [[ -n "${COGNITION_TEST_HAPROXY:-}" ]]; then
  version="$(version_of "${COGNITION_TEST_HAPROXY}" || true)"
  [[ -n "${version}" ]] || fail "COGNITION_TEST_HAPROXY=${COGNITION_TEST_HAPROXY} does not run" \
    "${COGNITION_TEST_HAPROXY} -v" "fix the path, or unset it to let \`npm test\` install Debian's haproxy"
  say "ready: ${version} (from COGNITION_TEST_HAPROXY)"
  exit 0
fi
binary=/usr/sbin/haproxy
if [[ -x "${binary}" ]] && version="$(version_of "${binary}")" && [[ -n "${version}" ]]; then
  say "ready: ${version} at ${binary} (already installed)"
  exit 0
fi
# policy-rc.d keeps the package's service from starting (the tests run their own processes).
if [[ "$(id -u)" == 0 && ! -e /usr/sbin/policy-rc.d ]]; then
  printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d && chmod +x /usr/sbin/policy-rc.d
  trap 'rm -f /usr/sbin/policy-rc.d' EXIT
fi
apt_install haproxy "${provide}"
version="$(version_of "${binary}" || true)"
[[ -n "${version}" ]] || fail "haproxy was installed but does not run" "${binary} -v" "${provide}"
say "installed: ${version} at ${binary}"
