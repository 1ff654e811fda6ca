#!/usr/bin/env bash
# Issue 22's targets, measured side by side: `notify-bench pipeline` built from this tree against
# the same benchmark at commit a667a5e (the pipeline before the event-time merge), in PAIRS alternating
# pairs (default 5), each run on a fresh broker with COUNT messages (default 150000) and then 5 s at
# 10,000 messages/s offered. Prints each run, the medians of messages/s and their ratio (target: at
# least 0.90), each pair's ratio and their median, in how many runs of each p99 at 10,000/s was at
# most 30 ms and the medians of p99 (target: 30 ms), how many records this tree's latency runs
# folded late, each pair's p99 of this tree less a667a5e's, and the medians of each build's CPU per
# message (throughput run) and cores busy (latency run).
#
#   bash Benchmarks/against-a667a5e.sh [PAIRS] [COUNT]
#   LATENESS=2 bash Benchmarks/against-a667a5e.sh ...   # this tree's runs at a lateness of 2 ms
#
# LATENESS (milliseconds) sets this tree's pipeline.lateness (default 10 ms, the pipeline's default):
# what the wait costs in latency, against the same baseline. The baseline has no such setting.
# a667a5e is a git worktree in .build-a667a5e/ with a build folder of its own: its first build takes
# several minutes, later runs reuse it. Uncommitted changes of this tree are measured.
set -euo pipefail
cd "$(dirname "$0")/.."
pairs=${1:-5}
count=${2:-150000}
baseline=a667a5e
source Benchmarks/pairs.sh
name="this tree"
if [ -n "${LATENESS:-}" ]; then
  args_a=(--lateness "$LATENESS")
  name="this tree (lateness $LATENESS ms)"
fi

echo "building notify-bench from this tree (.build-static) ..."
build_this_tree

echo "building notify-bench at $baseline (.build-$baseline) ..."
build_baseline "$baseline"

run_pairs "$broker_bin" "$pairs" "$count" "$name" "$tree_bench" "$baseline" "$copy_bench"
now=$(median "${rates_a[@]}")
base=$(median "${rates_b[@]}")
# How many of the p99 figures given are at most 30 ms.
within() { printf '%s\n' "$@" | awk '$1 <= 30 { n++ } END { print n + 0 }'; }
echo "median: this tree $now messages/s, $baseline $base messages/s, this tree/$baseline = $(ratio "$now" "$base") (target >= 0.90)"
# Each pair ran back to back: its ratio leaves out how busy the machine was in that minute.
pair_ratios=()
for index in "${!rates_a[@]}"; do pair_ratios+=("$(ratio "${rates_a[$index]}" "${rates_b[$index]}")"); done
echo "per pair: this tree/$baseline = ${pair_ratios[*]} (median $(median "${pair_ratios[@]}"))"
echo "p99 at 10,000/s at most 30 ms: this tree in $(within "${p99_a[@]}") of ${#p99_a[@]} runs, $baseline in $(within "${p99_b[@]}") of ${#p99_b[@]}; medians: this tree $(median "${p99_a[@]}") ms, $baseline $(median "${p99_b[@]}") ms (target: 30 ms)"
# What the lateness leaves out of order: records the latency runs folded after a later one (each
# slice of 100 messages shares one millisecond, so a slice read over more than the lateness shows here).
echo "records folded late in this tree's latency runs (of 50,000 messages each): ${late_a[*]:-none printed}"
# What the event-time merge adds to the tail, pair by pair: the baseline's own p99 moves with how busy the
# machine is, and this tree's p99 is that plus the lateness plus what stage 1 and stage 2 wait beyond it.
p99_gaps=()
for index in "${!p99_a[@]}"; do
  p99_gaps+=("$(awk -v a="${p99_a[$index]}" -v b="${p99_b[$index]}" 'BEGIN { printf "%.1f", a - b }')")
done
echo "per pair: p99 of this tree minus $baseline's = ${p99_gaps[*]} ms (median $(median "${p99_gaps[@]}") ms, at a lateness of ${LATENESS:-10} ms)"
# What each build costs in CPU (the pipeline and the producer feeding it, in one process): the
# throughput run's per message, and the cores the latency run kept busy. On two cores shared with
# the broker, the CPU the latency run takes is what the other work waits for.
echo "CPU per message (throughput run, median): this tree $(median "${cpu_a[@]}") µs, $baseline $(median "${cpu_b[@]}") µs"
echo "cores busy at 10,000/s (median): this tree $(median "${cores_a[@]}"), $baseline $(median "${cores_b[@]}")"
