#!/usr/bin/env bash
# Runs the whole system on this machine: installs what is missing, builds, and
# starts `notify dev` (embedded broker, topics, both pipeline stages, the in-app
# gateway, a console sink and the demo scenario). Ctrl-C stops it.
set -euo pipefail
cd "$(dirname "$0")/.."
NOTIFY_SKIP_BROWSER=1 bash Scripts/setup.sh
swift build --product notify
bin="$(swift build --show-bin-path)"
echo "notify is $bin/notify; to run it by name in another terminal: export PATH=\"$bin:\$PATH\""
exec "$bin/notify" dev "$@"
