#!/usr/bin/env bash
# Spark (strom's `spark` target, and its tests) needs a Java 17+ runtime. Nothing to do when one is on the
# PATH; otherwise install Debian's headless JRE (as root, or through sudo).
set -euo pipefail
if command -v java >/dev/null 2>&1; then
  major=$(java -version 2>&1 | sed -n 's/.*version "\([0-9]*\).*/\1/p' | head -1)
  if [ -n "$major" ] && [ "$major" -ge 17 ]; then
    exit 0
  fi
  echo "ensure-java: found Java $major; Spark 4 needs 17 or newer" >&2
fi
"$(dirname "$0")/apt-install.sh" ensure-java openjdk-17-jre-headless "a Java 17+ runtime (e.g. OpenJDK)"
java -version
