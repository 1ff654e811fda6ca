#!/usr/bin/env bash
# A CPU profile of the pipeline's throughput run alone: `notify-bench pipeline` as kafka.sh runs it,
# with `perf record` attached only once the throughput run starts. A profile of the whole process is
# mostly what comes before it: seeding and the identity table's load (busy), then task assignment
# (every task reads every table partition with a consumer of its own: about 13 s at 0.3 cores on this
# machine), against 2 to 3 s of throughput at 1.6 to 1.8 cores, and says little about the messages/s.
# The profile starts at the first busy 0.2 s (over 1.2 cores) after a quiet second (under 0.6).
#
#   bash Benchmarks/profile-throughput.sh [COUNT] [SECONDS] [OUT]
#
# COUNT messages (default 200000), SECONDS of profile at 2 kHz (default 1.5), or `run`: at 1 kHz until
# the throughput run ends (its last command acknowledged). A window of seconds catches the stages in
# whatever proportion they run then (under a backlog stage 1 runs ahead); `run` gives each message's
# whole cost. Written to OUT (default $TMPDIR/perf-throughput.data, /tmp without TMPDIR). Needs perf
# (Debian's linux-perf). Prints the run's figures and the functions with the most samples, their
# callees included. BENCH=path/to/notify-bench profiles that build instead (a667a5e's, say, from
# .build-a667a5e/build/release/notify-bench), for a side-by-side of two profiles.
set -euo pipefail
cd "$(dirname "$0")/.."
count=${1:-200000}
seconds=${2:-1.5}
out=${3:-${TMPDIR:-/tmp}/perf-throughput.data}
command -v perf >/dev/null || { echo "perf is missing: apt-get install linux-perf" >&2; exit 1; }
scratch=(--scratch-path .build-static --static-swift-stdlib)
swift build --product notify >/dev/null
broker_bin=$(swift build --show-bin-path)
swift build -c release "${scratch[@]}" --product notify-bench >/dev/null
bin=$(swift build -c release "${scratch[@]}" --show-bin-path)

source Benchmarks/broker.sh
log=$(mktemp)
bench=
trap 'if [ -n "$bench" ]; then kill "$bench" 2>/dev/null; wait "$bench" 2>/dev/null; fi; stop_broker; rm -f "$log" "$log.err" "$log.bench"' EXIT
start_broker "$broker_bin/notify" "$log"

"${BENCH:-$bin/notify-bench}" pipeline --bootstrap "$bootstrap" --count "$count" --seconds 1 --schemas Schemas \
  -X fetch.wait.max.ms=1 -X linger.ms=1 >"$log.bench" 2>&1 &
bench=$!
ticks() { awk '{ print $14 + $15 }' "/proc/$bench/stat"; }  # CPU of the process, in 1/100 s
before=$(ticks)
quiet=0
busy=0
while kill -0 "$bench" 2>/dev/null; do
  sleep 0.1
  now=$(ticks) || break
  if ((now - before < 6)); then quiet=$((quiet + 1)) busy=0; else busy=$((busy + 1)); fi
  if ((now - before >= 12 && quiet >= 10 && busy >= 2)); then break; fi
  before=$now
done
kill -0 "$bench" 2>/dev/null || { cat "$log.bench"; echo "the run ended before its throughput window" >&2; exit 1; }
if [ "$seconds" = run ]; then
  perf record -F 1000 -g -o "$out" -p "$bench" 2>/dev/null &
  perf=$!
  until grep -q '^pipeline: [0-9]' "$log.bench" || ! kill -0 "$bench" 2>/dev/null; do sleep 0.02; done
  kill -INT "$perf"
  wait "$perf" || true
else
  perf record -F 2000 -g -o "$out" -p "$bench" -- sleep "$seconds" 2>/dev/null
fi
wait "$bench"
bench=
grep '^pipeline: [0-9]\|^pipeline: each' "$log.bench"
perf report -i "$out" --children --sort sym -g none 2>/dev/null | grep -E '^ +[0-9]' | head -60 | swift demangle --simplified
echo "profile: $out (perf report -i $out)"
