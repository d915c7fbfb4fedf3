#!/usr/bin/env bash
# The instruction-count benchmark (`make bench-instructions`) runs the jobs under valgrind. Nothing to do when
# valgrind is on the PATH; otherwise install Debian's package (as root, or through sudo).
set -euo pipefail
if command -v valgrind >/dev/null 2>&1; then
  exit 0
fi
"$(dirname "$0")/apt-install.sh" ensure-valgrind valgrind valgrind
valgrind --version
