#!/usr/bin/env bash
# The data-path soak (issue 29): every byte checked through both ends, the real path
#   client → `tunnel up` → sshd (RekeyLimit 512K) → `home up` → an echo server
# while SOAK_BUSY (default 2) busy loops compete for the cores and, every SOAK_RECONNECT
# seconds (default 20; 0: never), `tunnel reconnect` and `home reconnect` take turns.
# Every SOAK_BURST_EVERY seconds (default 15; 0: never) SOAK_BURST_SIZE (default 20) connections open
# at once beside the workers, each echoed and checked (issue 56: bursts past the pool, and with the
# reconnects, bursts during planned reconnects). Network moves are not part of it (it runs on
# loopback, not in namespaces): scripts/lib/roaming.sh and the NetworkCutTests cover moves.
# SOAK_WORKERS (default 64) threads of scripts/lib/soak.py, spread over SOAK_PROCESSES processes
# (default: one per core), open connections for SOAK_SECONDS
# (default 600): random sizes (1 B to 1 MiB), random kinds (echoed and checked, read slowly,
# abandoned halfway, reset), every payload made of records naming its connection and offset.
# Prints the connections and bytes, anything out of place or hung, the stalls octunnel named,
# and the peak memory and descriptors of both octunnel processes (and their growth from the
# end of the run's first fifth to its end). Exits 1 if any byte was out of place, any
# connection hung, the client itself failed, or any stall was named.
#   bash scripts/soak.sh                  # the long soak (10 minutes)
#   SOAK_SECONDS=30 bash scripts/soak.sh  # the short one (the test suite runs this; 60 s by --long-tests)
# OCT names the octunnel binary (default: a release build). SOAK_DEB13=1: both octunnel processes
# are the one built in Debian 13's root against its libssh2 1.11.1 (scripts/lib/debian-leg.sh's
# build), run in that root.
#   bash scripts/soak.sh --long-tests     # the suites that wait on real time, at the field's
#                                         # lengths (OCTUNNEL_LONG_TESTS=1: a 60 s outage at each
#                                         # end, a 3-minute event stream, this soak for 60 s);
#                                         # CI runs them shorter (Tests/…/TestLengths.swift)
. "$(dirname "$0")/lib/bench-prelude.sh"
if [ "${1:-}" = --long-tests ]; then
  swift build --build-tests
  OCTUNNEL_LONG_TESTS=1 exec swift test --skip-build --parallel --num-workers 2 \
    --filter 'StreamSoakTests|SoakTests|NetworkCutTests|HomeNetworkTests|NotifyCutTests'
fi
SECONDS_=${SOAK_SECONDS:-600}
WORKERS=${SOAK_WORKERS:-64}
BUSY=${SOAK_BUSY:-2}
RECONNECT=${SOAK_RECONNECT:-20}
scratch_dir soak
if [ -n "${SOAK_DEB13:-}" ]; then
  . scripts/lib/roots.sh
  trap 'scratch_cleanup; root_unmount_all' EXIT   # the processes in the root stop first
  octunnel_in_trixie .build-package-deb13
  OCT=$trixie_octunnel
fi
release_octunnel
echo "soak: octunnel $("$OCT" --version)" >&2

coproc ECHO { exec python3 scripts/lib/soak.py server; }
pids+=($ECHO_PID)
read -r _ echo_port <&"${ECHO[0]}"

start_octunnel_vps "$work" "RekeyLimit 512K" "MaxStartups 200" "MaxSessions 100" "LogLevel DEBUG1"
user=$(id -un)
remote_port=$(free_port); local_port=$(free_port)
"$OCT" home up --home "$work/home" "$user@127.0.0.1:$ssh_port" --remote-port "$remote_port" --home-port "$echo_port" \
  --no-health 2>"$work/home.log" & pids+=($!); home_pid=$!
wait_port "$remote_port"
"$OCT" tunnel up --home "$work/home" "$user@127.0.0.1:$ssh_port" --local-port "$local_port" --remote-port "$remote_port" \
  --no-health 2>"$work/tunnel.log" & pids+=($!); tunnel_pid=$!
wait_port "$local_port"
wait_line "$work/tunnel.log" "^connected to"

for _ in $(seq "$BUSY"); do sh -c 'while :; do :; done' & pids+=($!); done
if [ "$RECONNECT" -gt 0 ]; then
  ( turn=0
    while sleep "$RECONNECT"; do   # the reconnect rate is the scenario, not synchronisation
      if (( turn++ % 2 )); then "$OCT" home reconnect --home "$work/home" >/dev/null 2>&1 || true
      else "$OCT" tunnel reconnect --home "$work/home" >/dev/null 2>&1 || true; fi
    done ) & pids+=($!)
fi

echo "soak: $SECONDS_ s, $WORKERS workers, $BUSY busy loops, a reconnect every $RECONNECT s," \
  "${SOAK_BURST_SIZE:-20} connections at once every ${SOAK_BURST_EVERY:-15} s, sshd RekeyLimit 512K" >&2
python3 scripts/lib/soak.py client "$local_port" "$SECONDS_" "$WORKERS" "$tunnel_pid" "$home_pid" | tee "$work/result"
rekeys=$(grep -c 'SSH2_MSG_NEWKEYS received' "$work/sshd.log" || true)
stalls=$(cat "$work/tunnel.log" "$work/home.log" | grep -c 'stalled for' || true)
sessions_tunnel=$(grep -c '^connected to' "$work/tunnel.log" || true)
sessions_home=$(grep -c '^connected to' "$work/home.log" || true)
echo "stalls_named $stalls"
echo "sessions tunnel_up=$sessions_tunnel home_up=$sessions_home"
echo "rekeys $rekeys"
[ "$stalls" -eq 0 ] || grep 'stalled for' "$work/tunnel.log" "$work/home.log" | head -5
bad=$(awk '$1 == "out_of_place" || $1 == "hung" || $1 == "client_errors" {s += $2} END {print s + 0}' "$work/result")
[ "$bad" -eq 0 ] && [ "$stalls" -eq 0 ]
