#!/usr/bin/env bash
# Runs every test: installs what is missing, builds, and runs `swift test`.
# The tests start their own embedded Kafka brokers and servers on 127.0.0.1.
set -euo pipefail
cd "$(dirname "$0")/.."
bash Scripts/setup.sh
swift build --build-tests
swift test --skip-build "$@"
