# The embedded broker the benchmarks run on (`notify broker`: librdkafka's mock cluster); sourced by
# kafka.sh, pairs.sh, profile-throughput.sh and idle-cpu.sh.
#
#   start_broker NOTIFY LOG [ARGS...]    starts `NOTIFY broker ARGS...`; sets broker (its PID) and bootstrap
#   stop_broker                          stops the broker started last, if any
#   on_fresh_broker NOTIFY LOG CMD...    runs CMD (which reads $bootstrap) with a broker of its own,
#                                        started with the arguments in broker_args; once more on another
#                                        fresh broker if it fails
#
# The broker writes its address to LOG and its own log to LOG.err. start_broker waits up to 60 s for
# the address and fails, saying so with the broker's last log lines, if the broker exits first or
# prints none (then also where its threads wait, and their stacks in LOG.stacks if gdb is there):
# the scripts used to wait 10 s and go on with an empty address, and the run failed 10 s later on
# "_TRANSPORT ... metadata of chat.messages", which named neither (an empty `--bootstrap` gives
# exactly that error).

broker=
bootstrap=
broker_args=()

start_broker() {
  local notify=$1 log=$2
  shift 2
  "$notify" broker "$@" >"$log" 2>"$log.err" &
  broker=$!
  for _ in $(seq 600); do
    [ -s "$log" ] && break
    kill -0 "$broker" 2>/dev/null || break
    sleep 0.1
  done
  bootstrap=$(head -1 "$log")
  if [ -z "$bootstrap" ]; then
    if kill -0 "$broker" 2>/dev/null; then
      echo "notify broker printed no address in 60 s; where its threads wait:" >&2
      broker_threads "$broker" "$log.stacks" >&2
      echo "its last log lines:" >&2
    else
      echo "notify broker exited before it printed its address; its last log lines:" >&2
    fi
    tail -5 "$log.err" >&2
    stop_broker
    return 1
  fi
}

# Where each thread of process PID waits (name, state, kernel wait channel), and, when gdb is there,
# every thread's stack in FILE: a broker that printed no address (2026-12-03 08:56, with nothing in
# its log; the cause is not known) is looked at before it is stopped.
broker_threads() {
  local pid=$1 stacks=$2 task
  for task in /proc/"$pid"/task/*; do
    echo "  thread $(basename "$task") $(cat "$task/comm" 2>/dev/null): $(awk '{ print $3 }' "$task/stat" 2>/dev/null) $(cat "$task/wchan" 2>/dev/null)"
  done
  if command -v gdb >/dev/null; then
    gdb -batch -p "$pid" -ex 'thread apply all bt' >"$stacks" 2>&1 && echo "  its threads' stacks: $stacks"
  fi
}

stop_broker() {
  if [ -n "$broker" ]; then
    kill "$broker" 2>/dev/null || true
    wait "$broker" 2>/dev/null || true
  fi
  broker=
}

# CMD's standard error goes to LOG.stderr and is shown once it ends. A failure is said with CMD's exit
# status: on a busy host a run once ended a whole series of pairs, and once a kafka.sh, with
# "_TRANSPORT ... metadata of chat.messages". A second failure returns 1.
on_fresh_broker() {
  local notify=$1 log=$2 attempt status
  shift 2
  for attempt in 1 2; do
    status=0
    if start_broker "$notify" "$log" "${broker_args[@]}"; then
      "$@" 2>"$log.stderr" || status=$?
      stop_broker
      cat "$log.stderr" >&2
    else
      status=1
    fi
    ((status == 0)) && return 0
    echo "$* failed (exit $status, attempt $attempt of 2)" >&2
  done
  return 1
}
