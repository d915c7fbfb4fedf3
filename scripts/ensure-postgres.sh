#!/usr/bin/env bash
# The JDBC connector's tests start a real PostgreSQL server (initdb into a temporary directory). Nothing to do
# when Debian's server binaries are there; otherwise install Debian's `postgresql` (as root, or through sudo).
set -euo pipefail
if ls /usr/lib/postgresql/*/bin/postgres >/dev/null 2>&1 || command -v postgres >/dev/null 2>&1; then
  exit 0
fi
"$(dirname "$0")/apt-install.sh" ensure-postgres postgresql "PostgreSQL's server (initdb, postgres)"
# the package starts a cluster of its own; the tests do not use it
if command -v pg_ctlcluster >/dev/null 2>&1; then
  for c in /etc/postgresql/*/main; do
    [ -d "$c" ] && pg_ctlcluster "$(basename "$(dirname "$c")")" main stop >/dev/null 2>&1 || true
  done
fi
