# Runs two builds of `notify-bench pipeline` in alternating pairs, each run on a fresh broker, with
# the client properties of Benchmarks/kafka.sh; sourced by repartition-cost.sh and against-a667a5e.sh.
#
#   build_this_tree                  sets broker_bin (debug `notify`) and tree_bench (release bench)
#   build_copy DIR                   builds the bench of the worktree DIR/tree in DIR/build; sets copy_bench
#   run_pairs BROKER_BIN PAIRS COUNT NAME_A BENCH_A NAME_B BENCH_B
#
# One short run of each build comes first and is not counted. Odd pairs run A first, even pairs B
# first. Prints each run; leaves the messages/s in rates_a and
# rates_b, the p99 latencies at 10,000/s offered in p99_a and p99_b, the process's CPU per message
# of the throughput run (µs) in cpu_a and cpu_b, the cores its latency run kept busy in cores_a
# and cores_b, and how many records A's latency runs folded late (if A prints it) in late_a. The
# array args_a holds further arguments for A's runs, and broker_args for every run's `notify
# broker` (none unless the caller sets them).
#
#   build_baseline COMMIT            builds the bench at COMMIT in .build-COMMIT; sets copy_bench

source Benchmarks/broker.sh
source Benchmarks/median.sh

args_a=()
pairs_log=$(mktemp)
trap 'stop_broker; rm -f "$pairs_log" "$pairs_log.err" "$pairs_log.stderr" "$pairs_log.run"' EXIT

# This tree's broker (debug `notify`) and `notify-bench` (release, in .build-static).
build_this_tree() {
  local scratch=(--scratch-path .build-static --static-swift-stdlib)
  swift build --product notify >/dev/null
  broker_bin=$(swift build --show-bin-path)
  swift build -c release "${scratch[@]}" --product notify-bench >/dev/null
  tree_bench="$(swift build -c release "${scratch[@]}" --show-bin-path)/notify-bench"
}

# The `notify-bench` of the worktree $1/tree, built in $1/build; its package resolution and warnings
# shown only if the build fails.
build_copy() {
  local scratch=(--scratch-path ../build --static-swift-stdlib)
  if ! (cd "$1/tree" && swift build -c release "${scratch[@]}" --product notify-bench >../build.log 2>&1); then
    cat "$1/build.log"
    exit 1
  fi
  copy_bench="$(cd "$1/tree" && swift build -c release "${scratch[@]}" --show-bin-path)/notify-bench"
}

# The `notify-bench` of commit $1, from a git worktree in .build-$1/tree (made the first time)
# built in .build-$1/build: the first build takes several minutes, later runs reuse it.
build_baseline() {
  if [ ! -d ".build-$1/tree" ]; then
    git worktree prune
    git worktree add -q --detach ".build-$1/tree" "$1"
  fi
  build_copy ".build-$1"
}

# `$1 / $2` with three decimals.
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", a / b }'; }

# `notify-bench pipeline` of binary $1 with the client properties of Benchmarks/kafka.sh and the
# further arguments given, on the broker at $bootstrap; its output to $pairs_log.run.
pipeline_bench() {
  local bench=$1
  shift
  "$bench" pipeline --bootstrap "$bootstrap" --schemas Schemas -X fetch.wait.max.ms=1 -X linger.ms=1 "$@" \
    >"$pairs_log.run"
}

# `notify-bench pipeline` of binary $2 on a fresh broker (broker binary $1), with the further
# arguments given: once more on another fresh broker if it fails (broker.sh).
bench_on_fresh_broker() {
  local broker_bin=$1
  shift
  on_fresh_broker "$broker_bin/notify" "$pairs_log" pipeline_bench "$@"
}

# One run: pair $1, side $2 (a or b), named $3, binary $4; broker binary $5, $6 messages.
run_one() {
  local extra=()
  if [ "$2" = a ]; then extra=("${args_a[@]}"); fi
  bench_on_fresh_broker "$5" "$4" --count "$6" "${extra[@]}"
  local rate latency p99 per_message cores late
  rate=$(sed -nE 's/^pipeline: .* = ([0-9]+) messages\/s.*/\1/p' "$pairs_log.run")
  latency=$(sed -nE 's/^pipeline latency at .*(p50 [0-9.]+ ms, p99 [0-9.]+ ms).*/\1/p' "$pairs_log.run")
  p99=$(sed -nE 's/^pipeline latency at .*p99 ([0-9.]+) ms.*/\1/p' "$pairs_log.run")
  # The process's CPU (pipeline and the producer feeding it): per message in the throughput run, and
  # in cores over the latency run (both builds print them).
  per_message=$(sed -nE 's/^pipeline: .*producer included: ([0-9.]+) s = .*/\1/p' "$pairs_log.run" |
    awk -v count="$6" '{ printf "%.1f", $1 / count * 1e6 }')
  cores=$(sed -nE 's/^latency run: CPU ([0-9.]+) s over ([0-9.]+) s.*/\1 \2/p' "$pairs_log.run" |
    awk '{ printf "%.2f", $1 / $2 }')
  # Records the latency run folded after a later one (builds with the event-time merge print it).
  late=$(sed -nE 's/^pipeline latency at .*\(([0-9]+) records folded late\).*/\1/p' "$pairs_log.run")
  echo "pair $1, $3: $rate messages/s ($per_message µs of CPU per message); at 10,000/s offered $latency, $cores cores${late:+, $late folded late}"
  if [ "$2" = a ]; then
    rates_a+=("$rate") p99_a+=("$p99") cpu_a+=("$per_message") cores_a+=("$cores")
    if [ -n "$late" ]; then late_a+=("$late"); fi
  else
    rates_b+=("$rate") p99_b+=("$p99") cpu_b+=("$per_message") cores_b+=("$cores")
  fi
}

# One short run of binary $2 (broker binary $1), not counted: the first run after a build starts
# a freshly linked binary (and pages the broker's in), and without these the first run of every
# series was side A's. In 4 of the 12 series recorded before (docs/benchmarks.md), pair 1 had the
# lowest ratio of its five.
warm_up() { bench_on_fresh_broker "$1" "$2" --count 20000 --seconds 1; }

run_pairs() {
  rates_a=() rates_b=() p99_a=() p99_b=() cpu_a=() cpu_b=() cores_a=() cores_b=() late_a=()
  local pair
  echo "warming up both builds (one short run each, not counted) ..."
  warm_up "$1" "$5"
  warm_up "$1" "$7"
  for pair in $(seq "$2"); do
    if ((pair % 2)); then
      run_one "$pair" a "$4" "$5" "$1" "$3"
      run_one "$pair" b "$6" "$7" "$1" "$3"
    else
      run_one "$pair" b "$6" "$7" "$1" "$3"
      run_one "$pair" a "$4" "$5" "$1" "$3"
    fi
  done
}
