#!/usr/bin/env bash
# Issue 22's targets, measured side by side: `notify-bench pipeline` built from this tree against
# the same benchmark at commit a667a5e (the pipeline before the event-time merge), in PAIRS alternating
# pairs (default 5), each run on a fresh broker with COUNT messages (default 150000) and then 5 s at
# 10,000 messages/s offered. Prints each run, the medians of messages/s and their ratio (target: at
# least 0.90), and in how many runs of each p99 at 10,000/s was at most 30 ms (target: every run).
#
#   bash Benchmarks/against-a667a5e.sh [PAIRS] [COUNT]
#
# a667a5e is a git worktree in .build-a667a5e/ with a build folder of its own: its first build takes
# several minutes, later runs reuse it. Uncommitted changes of this tree are measured.
set -euo pipefail
cd "$(dirname "$0")/.."
pairs=${1:-5}
count=${2:-150000}
baseline=a667a5e
scratch=(--scratch-path .build-static --static-swift-stdlib)

echo "building notify-bench from this tree (.build-static) ..."
swift build --product notify >/dev/null
broker_bin=$(swift build --show-bin-path)
swift build -c release "${scratch[@]}" --product notify-bench >/dev/null
tree="$(swift build -c release "${scratch[@]}" --show-bin-path)/notify-bench"

echo "building notify-bench at $baseline (.build-$baseline) ..."
copy=.build-$baseline/tree
if [ ! -d "$copy" ]; then
  git worktree prune
  git worktree add -q --detach "$copy" "$baseline"
fi
copy_scratch=(--scratch-path ../build --static-swift-stdlib)
# Its package resolution and warnings shown only if the build fails.
if ! (cd "$copy" && swift build -c release "${copy_scratch[@]}" --product notify-bench >../build.log 2>&1); then
  cat ".build-$baseline/build.log"
  exit 1
fi
before="$(cd "$copy" && swift build -c release "${copy_scratch[@]}" --show-bin-path)/notify-bench"

source Benchmarks/pairs.sh
run_pairs "$broker_bin" "$pairs" "$count" "this tree" "$tree" "$baseline" "$before"
now=$(median "${rates_a[@]}")
base=$(median "${rates_b[@]}")
# How many of the p99 figures given are at most 30 ms.
within() { printf '%s\n' "$@" | awk '$1 <= 30 { n++ } END { print n + 0 }'; }
echo "median: this tree $now messages/s, $baseline $base messages/s, this tree/$baseline = $(ratio "$now" "$base") (target >= 0.90)"
echo "p99 at 10,000/s at most 30 ms: this tree in $(within "${p99_a[@]}") of ${#p99_a[@]} runs, $baseline in $(within "${p99_b[@]}") of ${#p99_b[@]} (target: every run)"
