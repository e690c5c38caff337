#!/usr/bin/env bash
# How often each tunnel wakes while nothing happens (issue 48, point 4): the context switches
# (voluntary + involuntary, every thread, /proc/PID/task/*/status) over IDLE_SECONDS (default 60)
# of an idle tunnel, per second, for `ssh -N -L`, `tunnel up --no-notify` and `tunnel up` following
# OpenCode's events (notifications on, the default) through the same sshd to the OpenCode
# stand-in (1.x: a heartbeat every 10 s, the only thing that happens). OCT: the octunnel binary
# (default: this tree's debug build); OCT_BEFORE: another one (an older commit's), measured the
# same way beside it. Prints one row per tunnel. Not part of the test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib/packages.sh
. scripts/lib/sshd.sh
. scripts/lib/scratch.sh
IDLE=${IDLE_SECONDS:-60}
OCT=${OCT:-$(swift build --show-bin-path)/octunnel}
scratch_dir idle-wakeups

standin_port() {
  python3 scripts/opencode-standin.py --port 0 --flavor opencode1 --quiet > "$work/standin.out" 2>&1 & pids+=($!)
  for _ in $(seq 200); do grep -q '^LISTENING' "$work/standin.out" 2>/dev/null && break; sleep 0.05; done
  awk '/^LISTENING/ {print $2}' "$work/standin.out"
}
backend=$(standin_port)
[ -n "$backend" ] || { echo "idle-wakeups: the stand-in did not start" >&2; exit 1; }

start_octunnel_vps "$work"
user=$(id -un)

# switches PID: voluntary + involuntary context switches of every thread of PID so far.
switches() { cat /proc/"$1"/task/*/status 2>/dev/null | awk '/ctxt_switches/ {n += $2} END {print n + 0}'; }
# idle_rate NAME PID: waits 3 s for the start to settle, then counts IDLE s.
idle_rate() {
  sleep 3
  local before after
  before=$(switches "$2"); sleep "$IDLE"; after=$(switches "$2")
  printf '| %s | %d | %.2f |\n' "$1" $((after - before)) "$(awk -v d=$((after - before)) -v s="$IDLE" 'BEGIN {print d / s}')"
}

echo "| idle for $IDLE s | context switches | per second |"
echo "|---|---|---|"
port=$(free_port)
ssh -N -i "$work/home/id_ed25519" -o UserKnownHostsFile=/dev/null -o StrictHostKeyChecking=no -o BatchMode=yes \
  -L "127.0.0.1:$port:127.0.0.1:$backend" -p "$ssh_port" "$user@127.0.0.1" 2>>"$work/ssh.log" & pid=$!; pids+=($pid)
wait_port "$port"
idle_rate "ssh -N -L" "$pid"
kill "$pid"

# up NAME BINARY FLAGS...: tunnel up, idle once it follows the events (or, with --no-notify, once healthy).
up() {
  local name=$1 binary=$2 log="$work/up-$RANDOM.log" pid
  shift 2
  "$binary" tunnel up --home "$work/home" "$user@127.0.0.1:$ssh_port" --local-port 0 --remote-port "$backend" --no-pair-port "$@" 2>"$log" &
  pid=$!; pids+=($pid)
  local ready="notifications: following"; [[ " $* " == *" --no-notify "* ]] && ready="health ✓"
  for _ in $(seq 400); do grep -q "$ready" "$log" 2>/dev/null && break; sleep 0.05; done
  grep -q "$ready" "$log" || { echo "idle-wakeups: $name did not get ready: $(tail -2 "$log")" >&2; kill "$pid"; return 1; }
  idle_rate "$name" "$pid"
  kill "$pid"; wait "$pid" 2>/dev/null || true
}
up "tunnel up --no-notify" "$OCT" --no-notify
up "tunnel up (notifications on)" "$OCT"
if [ -n "${OCT_BEFORE:-}" ]; then
  up "tunnel up --no-notify, before" "$OCT_BEFORE" --no-notify
  up "tunnel up (notifications on), before" "$OCT_BEFORE"
fi
