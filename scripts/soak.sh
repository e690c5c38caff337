#!/usr/bin/env bash
# The data-path soak (issue 29): every byte checked through both ends, the real path
#   client → `tunnel up` → sshd (RekeyLimit 512K) → `home up` → an echo server
# while SOAK_BUSY (default 2) busy loops compete for the cores and, every SOAK_RECONNECT
# seconds (default 20; 0: never), `tunnel reconnect` and `home reconnect` take turns.
# Every SOAK_BURST_EVERY seconds (default 15; 0: never) SOAK_BURST_SIZE (default 20) connections open
# at once beside the workers, each echoed and checked (issue 56: bursts past the pool, and with the
# reconnects, bursts during planned reconnects). Every SOAK_MOVE_EVERY seconds (default 23; 0: never),
# the first after SOAK_MOVE_FIRST (default half that), the laptop moves (issue 56: "a network move is an
# address that vanishes"): `tunnel up` and the client run in a laptop namespace with two links to a VPS
# namespace (sshd, `home up`, the echo server; scripts/lib/roaming-links.sh), and each move deletes the
# address the sessions use, adds the laptop's address on the other link and routes the VPS over it, then
# back. Moves need root (namespaces); elsewhere the soak runs on loopback and says so ("moves_skipped REASON").
# SOAK_WORKERS (default 64) threads of scripts/lib/soak.py, spread over SOAK_PROCESSES processes
# (default: one per core), open connections for SOAK_SECONDS
# (default 600): random sizes (1 B to 1 MiB), random kinds (echoed and checked, read slowly,
# abandoned halfway, reset), every payload made of records naming its connection and offset.
# Prints the connections and bytes, anything out of place or hung, the stalls octunnel named, the
# moves and how soon `tunnel up` had a new session after each, and the peak memory and descriptors
# of both octunnel processes (and their growth from the end of the run's first fifth to its end).
# Exits 1 if any byte was out of place, any connection hung, a move failed,
# the client itself failed, or any stall was named.
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
MOVE_EVERY=${SOAK_MOVE_EVERY:-23}
MOVE_FIRST=${SOAK_MOVE_FIRST:-$(awk -v e="$MOVE_EVERY" 'BEGIN {print e / 2}')}
scratch_dir soak
# On exit: the processes, then (with moves) the namespaces once empty, the scratch directory, the root's mounts.
unmount=""; L=""
soak_cleanup() {
  stop_started "${pids[@]}"
  [ -z "${L:-}" ] || roam_quiet "${namespaces[@]}"
  scratch_cleanup
  [ -z "$unmount" ] || root_unmount_all
}
trap soak_cleanup EXIT
if [ -n "${SOAK_DEB13:-}" ]; then
  . scripts/lib/roots.sh
  unmount=yes   # the processes in the root stop first
  octunnel_in_trixie .build-package-deb13
  OCT=$trixie_octunnel
fi
release_octunnel
echo "soak: octunnel $("$OCT" --version)" >&2

# Where each end runs: with moves, the laptop's namespace (tunnel up, the client) and the VPS's (sshd,
# home up, the echo server); without, here, on loopback. inL and inV prefix the commands.
inL=(); inV=(); vps=127.0.0.1; moves_skipped=""
if awk -v e="$MOVE_EVERY" 'BEGIN {exit !(e > 0)}'; then
  if [ "$(id -u)" -ne 0 ]; then moves_skipped="not root: network namespaces need CAP_SYS_ADMIN and CAP_NET_ADMIN"
  elif ! command -v ip >/dev/null; then moves_skipped="iproute2's ip is not installed"
  else
    . scripts/lib/roaming-links.sh
    L="octsoak-$$-$RANDOM-l"; V="${L%-l}-v"
    namespaces+=("$L" "$V")
    roam_links "$L" "$V"
    inL=(ip netns exec "$L"); inV=(ip netns exec "$V")
  fi
fi
[ -z "$moves_skipped" ] || echo "soak: no network moves ($moves_skipped)" >&2
port_in() { "${@:2}" bash -c '. scripts/lib/sshd.sh && wait_port "$1"' _ "$1"; }   # port_in PORT [PREFIX...]

coproc ECHO { exec "${inV[@]}" python3 scripts/lib/soak.py server; }
pids+=($ECHO_PID)
read -r _ echo_port <&"${ECHO[0]}"

sshd_lines=("RekeyLimit 512K" "MaxStartups 200" "MaxSessions 100" "LogLevel DEBUG1")
if [ ${#inV[@]} -gt 0 ]; then ssh_port=$(free_port); roam_vps "$V" "$work" "$ssh_port" "${sshd_lines[@]}"
else start_octunnel_vps "$work" "${sshd_lines[@]}"; fi
user=$(id -un)
remote_port=$(free_port); local_port=$(free_port)
"${inV[@]}" "$OCT" home up --home "$work/home" "$user@$vps:$ssh_port" --remote-port "$remote_port" --home-port "$echo_port" \
  --no-health 2>"$work/home.log" & pids+=($!); home_pid=$!
port_in "$remote_port" "${inV[@]}"
"${inL[@]}" "$OCT" tunnel up --home "$work/home" "$user@$vps:$ssh_port" --local-port "$local_port" --remote-port "$remote_port" \
  --no-health 2>"$work/tunnel.log" & pids+=($!); tunnel_pid=$!
port_in "$local_port" "${inL[@]}"
wait_line "$work/tunnel.log" "^connected to"

for _ in $(seq "$BUSY"); do sh -c 'while :; do :; done' & pids+=($!); done
if [ "$RECONNECT" -gt 0 ]; then
  ( turn=0
    while sleep "$RECONNECT"; do   # the reconnect rate is the scenario, not synchronisation
      if (( turn++ % 2 )); then "$OCT" home reconnect --home "$work/home" >/dev/null 2>&1 || true
      else "$OCT" tunnel reconnect --home "$work/home" >/dev/null 2>&1 || true; fi
    done ) & pids+=($!)
fi
if [ ${#inL[@]} -gt 0 ]; then
  ( n=0
    sleep "$MOVE_FIRST"   # the moves' rhythm is the scenario, not synchronisation
    while :; do
      roam_move "$L" "$n" || { echo "$((n + 1))" > "$work/move_failed"; exit 1; }
      n=$((n + 1)); echo "$n" > "$work/moves"; sleep "$MOVE_EVERY"
    done ) & mover=$!
  pids+=($mover)
fi

# The moves made, and how soon tunnel up had a new session after each (its "reconnected N s after a network
# change" lines: the session's address gone, a new session up; curl's view is scripts/lib/roaming.sh's).
soak_moves_report() {
  echo "moves $(cat "$work/moves" 2>/dev/null || echo 0)"
  [ -z "$moves_skipped" ] || echo "moves_skipped $moves_skipped"
  echo "address_gone_reconnects $(grep -c 'is gone; reconnecting now' "$work/tunnel.log" || true)"
  echo "reconnected_after_move_s $(grep -o 'reconnected [0-9.]* s after a network change' "$work/tunnel.log" | awk '{printf "%s ", $2}')"
  [ ! -e "$work/move_failed" ] || echo "problem move $(cat "$work/move_failed") failed (its ip commands, above)"
}
moves_text=$([ ${#inL[@]} -gt 0 ] && echo "a move every $MOVE_EVERY s" || echo "no moves")
echo "soak: $SECONDS_ s, $WORKERS workers, $BUSY busy loops, a reconnect every $RECONNECT s, $moves_text," \
  "${SOAK_BURST_SIZE:-20} connections at once every ${SOAK_BURST_EVERY:-15} s, sshd RekeyLimit 512K" >&2
"${inL[@]}" python3 scripts/lib/soak.py client "$local_port" "$SECONDS_" "$WORKERS" "$tunnel_pid" "$home_pid" | tee "$work/result"
[ -z "${mover:-}" ] || { stop_started "$mover"; wait "$mover" 2>/dev/null || true; }   # moves while the client ran
rekeys=$(grep -c 'SSH2_MSG_NEWKEYS received' "$work/sshd.log" || true)
stalls=$(cat "$work/tunnel.log" "$work/home.log" | grep -c 'stalled for' || true)
sessions_tunnel=$(grep -c '^connected to' "$work/tunnel.log" || true)
sessions_home=$(grep -c '^connected to' "$work/home.log" || true)
echo "stalls_named $stalls"
echo "sessions tunnel_up=$sessions_tunnel home_up=$sessions_home"
echo "rekeys $rekeys"
soak_moves_report
[ "$stalls" -eq 0 ] || grep 'stalled for' "$work/tunnel.log" "$work/home.log" | head -5
bad=$(awk '$1 == "out_of_place" || $1 == "hung" || $1 == "client_errors" {s += $2} END {print s + 0}' "$work/result")
[ "$bad" -eq 0 ] && [ "$stalls" -eq 0 ] && [ ! -e "$work/move_failed" ]
