#!/usr/bin/env bash
# The Redis Streams connector's tests start a real redis-server on 127.0.0.1. Nothing to do when it is on the
# PATH; otherwise install Debian's `redis-server` (as root, or through sudo).
set -euo pipefail
if command -v redis-server >/dev/null 2>&1; then
  exit 0
fi
"$(dirname "$0")/apt-install.sh" ensure-redis redis-server "Redis (redis-server)"
# the package may start a server of its own on port 6379; the tests start theirs
if command -v systemctl >/dev/null 2>&1; then systemctl stop redis-server >/dev/null 2>&1 || true; fi
if command -v service >/dev/null 2>&1; then service redis-server stop >/dev/null 2>&1 || true; fi
