#!/usr/bin/env bash
# Installs what notify needs on a Debian/Ubuntu machine that has Swift:
# librdkafka (the Kafka client library), kcat (an independent Kafka client the
# tests compare against), Python's jsonschema (the schema tests' validator) and
# Chromium (the console's screenshot test). Safe to run again: it installs only what is missing.
set -euo pipefail

packages=()
pkg-config --exists rdkafka 2>/dev/null || packages+=(librdkafka-dev pkg-config)
command -v kcat >/dev/null 2>&1 || packages+=(kcat)
command -v python3 >/dev/null 2>&1 || packages+=(python3)
if [ "${NOTIFY_SKIP_BROWSER:-}" != 1 ] && ! command -v chromium >/dev/null 2>&1; then packages+=(chromium); fi
if [ ${#packages[@]} -gt 0 ]; then
  sudo=""
  [ "$(id -u)" = 0 ] || sudo=sudo
  echo "setup: installing ${packages[*]}"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${packages[@]}" >/dev/null
fi
if ! python3 -c 'import jsonschema' 2>/dev/null; then
  echo "setup: installing Python's jsonschema"
  python3 -m pip install --quiet jsonschema || python3 -m pip install --quiet --break-system-packages jsonschema
fi
