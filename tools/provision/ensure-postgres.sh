#!/usr/bin/env bash
# Makes PostgreSQL reachable on 127.0.0.1:5432 with trust auth for the tests. Idempotent:
# does nothing when a server already answers; installs and starts Debian's package otherwise.
set -euo pipefail

if pg_isready -q -h 127.0.0.1 -p 5432 2>/dev/null; then
  echo "postgres: already accepting connections on 127.0.0.1:5432"
  exit 0
fi

if ! ls /etc/postgresql/*/main >/dev/null 2>&1; then
  echo "postgres: not installed; installing Debian's postgresql package"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq postgresql >/dev/null
fi

version=$(ls /etc/postgresql | sort -V | tail -n 1)
hba=/etc/postgresql/$version/main/pg_hba.conf
if ! grep -qE '^host\s+all\s+all\s+127\.0\.0\.1/32\s+trust' "$hba"; then
  # Tests connect as postgres over TCP without a password, like the provisioned machines.
  sed -i '1i host all all 127.0.0.1/32 trust\nhost all all ::1/128 trust\nlocal all all trust' "$hba"
fi
pg_ctlcluster --skip-systemctl-redirect "$version" main start || true

for _ in $(seq 1 30); do
  if pg_isready -q -h 127.0.0.1 -p 5432; then
    echo "postgres: started ($version)"
    exit 0
  fi
  sleep 1
done
echo "postgres: did not become ready on 127.0.0.1:5432" >&2
exit 1
