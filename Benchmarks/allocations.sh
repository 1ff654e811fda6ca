#!/usr/bin/env bash
# Calls of jemalloc's allocation functions in one run of `notify-bench pipeline` (COUNT messages,
# default 150000, then 1 s at 10,000/s; the seeding included), built from this tree and at commit
# a667a5e, each on a fresh broker: a figure that, unlike time, does not move with the host's load
# (this project's machines expose no hardware counters). Prints each build's calls of malloc (per
# message of the two runs too) and of all four functions, and this tree's malloc calls less a667a5e's.
#
#   bash Benchmarks/allocations.sh [COUNT]
#
# Needs `perf` and the right to add uprobes (root): adds probe_libjemalloc:malloc, calloc, realloc
# and posix_memalign where missing, and deletes those it added. Under the probes the runs take a few
# minutes each; their messages/s mean nothing.
set -euo pipefail
cd "$(dirname "$0")/.."
count=${1:-150000}
baseline=a667a5e
source Benchmarks/pairs.sh

jemalloc=$(ldconfig -p | awk '/libjemalloc\.so\.2 / { print $NF; exit }')
[ -n "$jemalloc" ] || { echo "libjemalloc.so.2 not found (bash Scripts/setup.sh installs it)" >&2; exit 1; }
functions=(malloc calloc realloc posix_memalign)
added=()
delete_added_probes() { for probe in "${added[@]}"; do perf probe -q -d "probe_libjemalloc:$probe" || true; done; }
trap 'delete_added_probes; stop_broker; rm -f "$pairs_log" "$pairs_log".*' EXIT
for function in "${functions[@]}"; do
  if ! perf probe -l 2>/dev/null | grep -q "probe_libjemalloc:$function "; then
    perf probe -q -x "$jemalloc" --add "$function"
    added+=("$function")
  fi
done

echo "building notify-bench from this tree (.build-static) ..."
build_this_tree
echo "building notify-bench at $baseline (.build-$baseline) ..."
build_baseline "$baseline"

# perf stat of `notify-bench pipeline` (binary $1) on the broker at $bootstrap, into $pairs_log.stat.
counted_run() {
  perf stat -x, -e 'probe_libjemalloc:*' -o "$pairs_log.stat" -- "$1" pipeline --bootstrap "$bootstrap" \
    --schemas Schemas -X fetch.wait.max.ms=1 -X linger.ms=1 --count "$count" --seconds 1 >/dev/null
}

# The calls of `malloc` counted in the last run, and of all four functions.
calls() {
  awk -F, '/probe_libjemalloc:malloc/ { malloc += $1 } /probe_libjemalloc/ { all += $1 }
    END { print malloc + 0, all + 0 }' "$pairs_log.stat"
}

messages=$((count + 10000))
for side in "this tree:$tree_bench" "$baseline:$copy_bench"; do
  name=${side%%:*}
  on_fresh_broker "$broker_bin/notify" "$pairs_log" counted_run "${side#*:}"
  read -r malloc all < <(calls)
  if [ "$name" = "this tree" ]; then tree_calls=$malloc; else baseline_calls=$malloc; fi
  echo "$name: $malloc calls of malloc ($(awk -v a="$malloc" -v m="$messages" 'BEGIN { printf "%.1f", a / m }') per message), $all of the four functions"
done
echo "this tree less $baseline: $((tree_calls - baseline_calls)) calls of malloc"
