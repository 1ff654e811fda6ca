#!/usr/bin/env bash
# Runs every test: installs what is missing, builds, and runs `swift test` (arguments go to it).
# The tests start their own embedded Kafka brokers and servers on 127.0.0.1.
set -euo pipefail
cd "$(dirname "$0")/.."
bash Scripts/setup.sh
# Tests run in parallel, each with its own brokers and clients: about 800 descriptors at once
# on 2 cores, near the common soft limit of 1024, and librdkafka's embedded broker aborts the
# process when it cannot re-create a listener. Raise the soft limit to the hard one (at most 65536).
hard=$(ulimit -Hn)
if [ "$hard" = unlimited ] || [ "$hard" -gt 65536 ]; then hard=65536; fi
if [ "$(ulimit -n)" != unlimited ] && [ "$(ulimit -n)" -lt "$hard" ]; then ulimit -n "$hard"; fi
echo "open files limit for the tests: $(ulimit -n)"
# Every process the tests start inherits this variable. A test process that crashes or is killed
# leaves the pipelines, brokers and sinks it started behind (SwiftPM runs it in a process group of
# its own, so they get no signal either): on its way out, this script ends whatever still carries
# it, by PID. The environments are read with builtins only, so no process of the script's own but
# the script itself carries it then.
export NOTIFY_TEST_RUN="$$.$RANDOM$RANDOM"
end_leftover_processes() {
  local environ pid variables variable command
  for environ in /proc/[0-9]*/environ; do
    pid=${environ#/proc/}
    pid=${pid%/environ}
    [ "$pid" != $$ ] || continue
    mapfile -d '' variables 2>/dev/null <"$environ" || continue
    for variable in "${variables[@]}"; do
      [ "$variable" = "NOTIFY_TEST_RUN=$NOTIFY_TEST_RUN" ] || continue
      mapfile -d '' command 2>/dev/null <"/proc/$pid/cmdline" || true
      echo "test.sh: ending process $pid, started by a test and still running: ${command[*]:0:4}" >&2
      kill -KILL "$pid" 2>/dev/null || true
      break
    done
  done
}
trap end_leftover_processes EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
# The format (.swift-format, line length 120): `swift format format -i -r Sources Tests` fixes most of it.
swift format lint --strict --parallel -r Sources Tests
swift build --build-tests
if [ $# -gt 0 ]; then
  swift test --skip-build "$@"
  exit
fi
# The tests that take an embedded broker down run on their own, after the others. librdkafka's mock
# re-binds the broker's port when it goes down and aborts the process if that bind fails, which it
# does with "Address already in use" while a child process of the test process is starting (the
# child holds a copy of the listening socket until its exec). `EmbeddedBroker.startingChildProcess`
# keeps the two apart; the tests that start children by other means must not run beside these.
outage_tests='FaultToleranceTests|EmbeddedBrokerTests|ProbeOutageTests|ShutdownOutageTests'
# Suites that run several pipelines, brokers and processes each and compare them with render's
# bytes: run on their own, one test at a time, so that no other suite competes for the two cores
# (the event-time merge holds records for pipeline.lateness; a starved consumer misreads that).
process_tests='EventTimeBurstTests|CrashRunTests|StuckStageOneTests|RenderLiveEdgeTests|PipelineProcessTests|ProducerPartitioningTests|LiveRenderEquivalenceTests|SinkProcessRestartTests'
# The rest run in parallel, one test module at a time: all 74 suites at once on 2 cores once starved
# local TLS requests past their 10 s timeout and a ServiceGroup's shutdown past its cancellation
# budget (which ended the test process on purpose; a shell's shutdown deadline does now).
for module in $(ls Tests); do  # each folder of Tests/ is a test target of the same name
  swift test --skip-build --filter "^$module\\." --skip "$outage_tests|$process_tests"
done
swift test --skip-build --no-parallel --filter "$process_tests"
# EmbeddedBrokerTests starts some 13,000 child processes in 15 s: beside it, the outage suites that
# time a process's answer to a signal or a broker's return compete for the two cores. It runs last.
swift test --skip-build --filter "$outage_tests" --skip EmbeddedBrokerTests
swift test --skip-build --filter EmbeddedBrokerTests
