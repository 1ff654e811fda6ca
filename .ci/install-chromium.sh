#!/bin/sh
# Installs Debian's Chromium (and a colour emoji font, so chat text renders as it would on a phone)
# for the live console's headless-browser test (Tests/NotifyServiceTests/ConsoleBrowserTests.swift).
# Idempotent: does nothing when both are already installed. Call it from .ci/run before `swift test`.
set -eu

missing=""
command -v chromium >/dev/null 2>&1 || missing="$missing chromium"
dpkg -s fonts-noto-color-emoji >/dev/null 2>&1 || missing="$missing fonts-noto-color-emoji"

if [ -n "$missing" ]; then
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    # shellcheck disable=SC2086
    apt-get install -y -qq $missing
fi
chromium --version
