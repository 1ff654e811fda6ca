#!/usr/bin/env bash
# The pipeline with many partitions in one instance: `notify-bench pipeline` built from this tree
# against the same benchmark at commit a667a5e (the pipeline before the event-time merge), on a
# broker whose catalogue topics of 12 partitions have PARTITIONS instead (default 64; the others
# keep theirs), in PAIRS alternating pairs (default 2), each run on a fresh broker with COUNT
# messages (default 50000) and then 5 s at 10,000 messages/s offered. One process holds every task
# of both stages, so what grows with the tasks an instance holds shows here: the marks a stage
# announces every interval (tasks × partitions), the readings of the local writers at each release
# (one per writer) and the instance clock. Prints each run, the medians of messages/s and their
# ratio, and the medians of each build's p99 at 10,000/s and cores busy.
#
#   bash Benchmarks/partitions.sh [PARTITIONS] [PAIRS] [COUNT]
#
# a667a5e is built as for against-a667a5e.sh (a git worktree in .build-a667a5e/). Uncommitted
# changes of this tree are measured. At 256 partitions a run of this tree takes minutes.
set -euo pipefail
cd "$(dirname "$0")/.."
partitions=${1:-64}
pairs=${2:-2}
count=${3:-50000}
baseline=a667a5e
source Benchmarks/pairs.sh

# The catalogue's topics, those of 12 partitions or more at PARTITIONS.
mapfile -t broker_args < <(python3 - "$partitions" <<'PY'
import json, sys
print("--no-catalog")
for topic in json.load(open("Schemas/topics.json"))["topics"]:
    count = int(sys.argv[1]) if topic["partitions"] >= 12 else topic["partitions"]
    print("--topic")
    print(f"{topic['name']}:{count}")
PY
)

echo "building notify-bench from this tree (.build-static) ..."
build_this_tree
echo "building notify-bench at $baseline (.build-$baseline) ..."
build_baseline "$baseline"

echo "catalogue topics at $partitions partitions, one instance"
run_pairs "$broker_bin" "$pairs" "$count" "this tree" "$tree_bench" "$baseline" "$copy_bench"
now=$(median "${rates_a[@]}")
base=$(median "${rates_b[@]}")
echo "median at $partitions partitions: this tree $now messages/s, $baseline $base messages/s, this tree/$baseline = $(ratio "$now" "$base")"
echo "p99 at 10,000/s (median): this tree $(median "${p99_a[@]}") ms, $baseline $(median "${p99_b[@]}") ms"
echo "cores busy at 10,000/s (median): this tree $(median "${cores_a[@]}"), $baseline $(median "${cores_b[@]}")"
