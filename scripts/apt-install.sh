#!/usr/bin/env bash
# apt-install.sh WHO PACKAGE WHAT: install a Debian package for WHO (the calling script), as root or through sudo.
# WHAT says what to install by hand where there is no apt-get.
set -euo pipefail
who=$1 package=$2 what=$3
if ! command -v apt-get >/dev/null 2>&1; then
  echo "$who: no apt-get here; install $what and put it on the PATH" >&2
  exit 1
fi
sudo=""
if [ "$(id -u)" -ne 0 ]; then
  sudo="sudo"
fi
echo "$who: installing $package" >&2
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "$package" >/dev/null
