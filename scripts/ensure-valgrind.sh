#!/usr/bin/env bash
# The instruction-count benchmark (`make bench-instructions`) runs the jobs under valgrind. Nothing to do when
# valgrind is on the PATH; otherwise install Debian's package (as root, or through sudo).
set -euo pipefail
if command -v valgrind >/dev/null 2>&1; then
  exit 0
fi
if ! command -v apt-get >/dev/null 2>&1; then
  echo "ensure-valgrind: no valgrind and no apt-get; install valgrind and put it on the PATH" >&2
  exit 1
fi
sudo=""
if [ "$(id -u)" -ne 0 ]; then
  sudo="sudo"
fi
echo "ensure-valgrind: installing valgrind for the instruction-count benchmark" >&2
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends valgrind >/dev/null
valgrind --version
