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
source Benchmarks/pairs.sh

echo "building notify-bench, with the repartition topics (.build-static) ..."
build_this_tree

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
build_copy .build-without-repartition

run_pairs "$broker_bin" "$pairs" "$count" with "$tree_bench" without "$copy_bench"
w=$(median "${rates_a[@]}")
wo=$(median "${rates_b[@]}")
echo "median: with the repartition topics $w messages/s, without $wo messages/s," \
  "with/without = $(ratio "$w" "$wo") (a fall of at most 5% allowed)"
