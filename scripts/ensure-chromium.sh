#!/usr/bin/env bash
# The dashboard's browser tests (tests/e2e/test_dashboard.py) drive a real headless Chromium through selenium and
# /usr/bin/chromedriver. Nothing to do when both are there; otherwise install Debian's `chromium` and
# `chromium-driver` (as root, or through sudo).
set -euo pipefail
if command -v chromium >/dev/null 2>&1 && [ -x /usr/bin/chromedriver ]; then
  exit 0
fi
here="$(dirname "$0")"
command -v chromium >/dev/null 2>&1 || "$here/apt-install.sh" ensure-chromium chromium "Chromium (the chromium binary)"
[ -x /usr/bin/chromedriver ] || "$here/apt-install.sh" ensure-chromium chromium-driver "ChromeDriver (/usr/bin/chromedriver)"
