#!/usr/bin/env bash
# The Kafka foundation's benchmark: the Swift Kafka module against librdkafka
# used directly from C, same work, same broker, alternating runs, medians.
#
#   bash Benchmarks/passthrough.sh [COUNT] [RUNS]
#
# Starts `notify broker` (the embedded broker), seeds COUNT (default 150000)
# records of ~300 bytes on 16 partitions, then RUNS times (default 3) runs the
# C passthrough and `notify-bench passthrough` (700-byte outputs) one after the other.
set -euo pipefail
cd "$(dirname "$0")/.."
count=${1:-150000}
runs=${2:-3}
config=${CONFIG:-release}

swift build -c "$config" --product notify >/dev/null
swift build -c "$config" --product notify-bench >/dev/null
swift build -c "$config" --product rdkafka-passthrough >/dev/null
bin=$(swift build -c "$config" --show-bin-path)

topics=(--topic bench.in:16)
for run in $(seq "$runs"); do topics+=(--topic "bench.out.c.$run:16" --topic "bench.out.swift.$run:16"); done
log=$(mktemp)
"$bin/notify" broker "${topics[@]}" >"$log" 2>/dev/null &
broker=$!
trap 'kill "$broker" 2>/dev/null; wait "$broker" 2>/dev/null; rm -f "$log"' EXIT
for _ in $(seq 100); do [ -s "$log" ] && break; sleep 0.1; done
bootstrap=$(head -1 "$log")
echo "broker: $bootstrap"

"$bin/notify-bench" seed --bootstrap "$bootstrap" --topic bench.in --count "$count" --size 300

c_rates=()
swift_rates=()
for run in $(seq "$runs"); do
  line=$("$bin/rdkafka-passthrough" "$bootstrap" bench.in "bench.out.c.$run" "$count" 700 "bench-c-$run")
  echo "run $run: $line"
  c_rates+=("$(sed -E 's/.* = ([0-9]+) records\/s/\1/' <<<"$line")")
  line=$("$bin/notify-bench" passthrough --bootstrap "$bootstrap" --from bench.in --to "bench.out.swift.$run" \
    --count "$count" --size 700 --group "bench-swift-$run")
  echo "run $run: $line"
  swift_rates+=("$(sed -E 's/.* = ([0-9]+) records\/s/\1/' <<<"$line")")
done

median() { printf '%s\n' "$@" | sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }
c=$(median "${c_rates[@]}")
s=$(median "${swift_rates[@]}")
echo "median: C $c records/s, Swift $s records/s, Swift/C = $(awk -v s="$s" -v c="$c" 'BEGIN { printf "%.2f", s / c }') (target >= 0.80)"
