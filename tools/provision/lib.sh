# Shared by the ensure-<service>.sh scripts (sourced; `service` names the caller's service).
# The output contract of README.md: one `<service>: …` line per step on stdout, and on failure
# one `<service>: UNAVAILABLE` message on stderr with what was tried and how to provide it.

say() { printf '%s: %s\n' "${service}" "$*"; }

fail() { # what, tried, how to provide it
  printf '%s: UNAVAILABLE — %s\n  tried: %s\n  to provide it: %s\n' "${service}" "$1" "$2" "$3" >&2
  exit 1
}

# apt_install <package> <how to provide it>: installs a Debian package (root, apt-get), retrying
# once after `apt-get update` (a fresh machine's package lists may be missing or stale).
apt_install() {
  local package="$1" provide="$2" log="/tmp/cognition-apt-$1.log"
  [[ "$(id -u)" == 0 ]] || fail "${package} is missing and installing it needs root" "id -u" "${provide}"
  command -v apt-get >/dev/null 2>&1 || fail "${package} is missing and there is no apt-get" "command -v apt-get" "${provide}"
  say "installing Debian's ${package} (apt-get, about a minute the first time)"
  export DEBIAN_FRONTEND=noninteractive
  # Recommends (apparmor, fonts, ...) are not needed by the tests.
  if ! { apt-get install -y -qq --no-install-recommends "${package}" >/dev/null 2>&1 \
    || { apt-get update -qq && apt-get install -y -qq --no-install-recommends "${package}" >/dev/null; }; } 2>"${log}"; then
    fail "installing ${package} failed ($(tail -n 1 "${log}"))" "apt-get install ${package}" "${provide}"
  fi
}
