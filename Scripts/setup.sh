#!/usr/bin/env bash
# Installs what notify needs on a Debian/Ubuntu machine that has Swift:
# librdkafka (the Kafka client library), jemalloc (the executables' allocator),
# kcat (an independent Kafka client the tests compare against), openssl (the
# sink tests make a throwaway CA with it), curl (tests read a running process's
# /metrics with it), Python's jsonschema and PyYAML (the
# schema and Deploy tests), and Chromium with a colour emoji font and a CJK font (the console's
# headless-browser test and its screenshots, where the demo's "Bob 山田" would otherwise show as
# boxes; NOTIFY_SKIP_BROWSER=1 skips them). Safe to run again: it installs only what is missing.
set -euo pipefail

packages=()
pkg-config --exists rdkafka 2>/dev/null || packages+=(librdkafka-dev pkg-config)
pkg-config --exists jemalloc 2>/dev/null || packages+=(libjemalloc-dev pkg-config)
command -v kcat >/dev/null 2>&1 || packages+=(kcat)
command -v openssl >/dev/null 2>&1 || packages+=(openssl)
command -v curl >/dev/null 2>&1 || packages+=(curl)
command -v python3 >/dev/null 2>&1 || packages+=(python3)
python3 -m pip --version >/dev/null 2>&1 || packages+=(python3-pip)
if [ "${NOTIFY_SKIP_BROWSER:-}" != 1 ]; then
  command -v chromium >/dev/null 2>&1 || packages+=(chromium)
  dpkg -s fonts-noto-color-emoji >/dev/null 2>&1 || packages+=(fonts-noto-color-emoji)
  dpkg -s fonts-noto-cjk >/dev/null 2>&1 || packages+=(fonts-noto-cjk)
fi
if [ ${#packages[@]} -gt 0 ]; then
  sudo=""
  [ "$(id -u)" = 0 ] || sudo=sudo
  echo "setup: installing ${packages[*]}"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${packages[@]}" >/dev/null
fi
for module in jsonschema:jsonschema yaml:pyyaml; do
  if ! python3 -c "import ${module%%:*}" 2>/dev/null; then
    echo "setup: installing Python's ${module##*:}"
    python3 -m pip install --quiet "${module##*:}" || python3 -m pip install --quiet --break-system-packages "${module##*:}"
  fi
done
