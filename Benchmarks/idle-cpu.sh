#!/usr/bin/env bash
# What an idle `notify pipeline` costs: the cores a release build keeps busy with no input, on the
# embedded broker (which starts with the catalogue's topics), RUNS times (default 3) on a fresh
# broker each, and their median. Each run waits WARMUP seconds (default 15) after the start, for
# the tasks to be assigned and restored and the stages to go idle, then measures SECONDS (default
# 20) from the process's CPU time in /proc.
#
#   bash Benchmarks/idle-cpu.sh [RUNS] [SECONDS] [WARMUP]
#
# The pipeline is built in .build-static (as the other benchmarks' `notify-bench`), the broker is
# the debug `notify`. Uncommitted changes of this tree are measured.
set -euo pipefail
cd "$(dirname "$0")/.."
source Benchmarks/broker.sh
source Benchmarks/median.sh
runs=${1:-3}
seconds=${2:-20}
warmup=${3:-15}
scratch=(--scratch-path .build-static --static-swift-stdlib)

echo "building notify (debug, for the broker; release, for the pipeline) ..."
swift build --product notify >/dev/null
broker_bin="$(swift build --show-bin-path)/notify"
swift build -c release "${scratch[@]}" --product notify >/dev/null
pipeline_bin="$(swift build -c release "${scratch[@]}" --show-bin-path)/notify"

work=$(mktemp -d)
pipeline=
stop() {
  if [ -n "$pipeline" ]; then
    kill "$pipeline" 2>/dev/null || true
    wait "$pipeline" 2>/dev/null || true
  fi
  pipeline=
  stop_broker
}
trap 'stop; rm -rf "$work"' EXIT

# The process's user and system CPU time in clock ticks.
ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }

cores=()
for run in $(seq "$runs"); do
  start_broker "$broker_bin" "$work/broker"
  # The embedded broker starts with the catalogue's topics.
  "$pipeline_bin" pipeline --bootstrap "$bootstrap" --schemas Schemas --http-listen 127.0.0.1:0 \
    >"$work/pipeline" 2>&1 &
  pipeline=$!
  sleep "$warmup"
  before=$(ticks "$pipeline")
  sleep "$seconds"
  after=$(ticks "$pipeline")
  cores+=("$(awk -v a="$before" -v b="$after" -v s="$seconds" -v hz="$(getconf CLK_TCK)" \
    'BEGIN { printf "%.3f", (b - a) / hz / s }')")
  echo "run $run: an idle pipeline kept ${cores[-1]} cores busy over $seconds s"
  stop
done
echo "median: $(median "${cores[@]}") cores"
