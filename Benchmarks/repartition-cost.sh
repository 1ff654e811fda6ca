#!/usr/bin/env bash
# What the repartition topics cost a well-partitioned run (issue 17 allows 5%): `notify-bench
# pipeline` built from this tree against the same commit with Benchmarks/without-repartition.patch
# applied, in which the stages neither read notify.fanout-repartition and notify.route-repartition
# nor send them progress marks (a misplaced record would then be folded by the wrong task: that
# build is for this comparison only). PAIRS alternating pairs (default 8), each run on a fresh
# broker with COUNT messages (default 100000); prints each run, the medians and their ratio.
#
#   bash Benchmarks/repartition-cost.sh [PAIRS] [COUNT]
#
# The patched copy is a git worktree of HEAD in .build-without-repartition/ with a build folder of
# its own: its first build takes several minutes, later ones rebuild what the patch touches.
# Uncommitted changes of this tree are measured on the "with" side only.
set -euo pipefail
cd "$(dirname "$0")/.."
pairs=${1:-8}
count=${2:-100000}
scratch=(--scratch-path .build-static --static-swift-stdlib)

echo "building notify-bench, with the repartition topics (.build-static) ..."
swift build --product notify >/dev/null
broker_bin=$(swift build --show-bin-path)
swift build -c release "${scratch[@]}" --product notify-bench >/dev/null
with="$(swift build -c release "${scratch[@]}" --show-bin-path)/notify-bench"

echo "building notify-bench, without them (.build-without-repartition) ..."
copy=.build-without-repartition/tree
head=$(git rev-parse HEAD)
if [ -d "$copy" ]; then
  git -C "$copy" checkout -q -f --detach "$head"
else
  git worktree prune
  git worktree add -q --detach "$copy" "$head"
fi
git -C "$copy" apply "$PWD/Benchmarks/without-repartition.patch"
copy_scratch=(--scratch-path ../build --static-swift-stdlib)
# Its package resolution and warnings shown only if the build fails.
if ! (cd "$copy" && swift build -c release "${copy_scratch[@]}" --product notify-bench >../build.log 2>&1); then
  cat .build-without-repartition/build.log
  exit 1
fi
without="$(cd "$copy" && swift build -c release "${copy_scratch[@]}" --show-bin-path)/notify-bench"

log=$(mktemp)
broker=
trap 'if [ -n "$broker" ]; then kill "$broker" 2>/dev/null; wait "$broker" 2>/dev/null; fi; rm -f "$log" "$log.run"' EXIT
rates_with=()
rates_without=()
# One run of `$1` (with or without) on a fresh broker, with the properties of Benchmarks/kafka.sh.
run() {
  "$broker_bin/notify" broker >"$log" 2>/dev/null &
  broker=$!
  for _ in $(seq 100); do [ -s "$log" ] && break; sleep 0.1; done
  local bench=$with
  if [ "$1" = without ]; then bench=$without; fi
  "$bench" pipeline --bootstrap "$(head -1 "$log")" --count "$count" --schemas Schemas \
    -X fetch.wait.max.ms=1 -X linger.ms=1 >"$log.run"
  kill "$broker"
  wait "$broker" 2>/dev/null || true
  broker=
  local rate latency
  rate=$(sed -nE 's/^pipeline: .* = ([0-9]+) messages\/s.*/\1/p' "$log.run")
  latency=$(sed -nE 's/^pipeline latency at .*(p50 [0-9.]+ ms, p99 [0-9.]+ ms).*/\1/p' "$log.run")
  echo "pair $pair, $1: $rate messages/s; at 10,000/s offered $latency"
  if [ "$1" = without ]; then rates_without+=("$rate"); else rates_with+=("$rate"); fi
}
# Odd pairs run with the topics first, even pairs without first.
for pair in $(seq "$pairs"); do
  if (( pair % 2 )); then run with; run without; else run without; run with; fi
done

median() { printf '%s\n' "$@" | sort -n | awk '{ a[NR] = $1 } END { print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }
w=$(median "${rates_with[@]}")
wo=$(median "${rates_without[@]}")
echo "median: with the repartition topics $w messages/s, without $wo messages/s," \
  "with/without = $(awk -v a="$w" -v b="$wo" 'BEGIN { printf "%.3f", a / b }') (a fall of at most 5% allowed)"
