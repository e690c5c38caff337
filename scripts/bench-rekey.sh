#!/usr/bin/env bash
# The re-keys row: octunnel vs `ssh -N -L` through one sshd that re-keys every MiB
# (`RekeyLimit 1M`), REKEY_STREAMS (default 8) connections each echoing REKEY_MIB (default 16)
# MiB both ways at once, bytes checked, REKEY_ROUNDS (default 10) alternating rounds per tunnel.
# Then the same through both ends (REKEY_HOME=0 skips it): `tunnel up` → sshd → `home up` → the
# echo server, against `ssh -L` → sshd → `ssh -R`, both sessions re-keying.
# A stream that moves nothing for REKEY_STALL seconds (default 30) counts as stalled. Prints a
# Markdown section on stdout (scripts/bench.sh puts it in docs/benchmarks.md); runs on its own:
#   bash scripts/bench-rekey.sh
# REKEY_DELAY_MS (default 0) puts scripts/lib/delay-relay.py in front of sshd, holding each
# chunk that long each way (a WAN's round trip of twice that) for both tunnels.
# OCT names the octunnel binary (default: a release build).
. "$(dirname "$0")/lib/bench-prelude.sh"
ROUNDS=${REKEY_ROUNDS:-10}
STREAMS=${REKEY_STREAMS:-8}
MIB=${REKEY_MIB:-16}
STALL=${REKEY_STALL:-30}
release_octunnel
scratch_dir rekey

coproc ECHO { exec python3 scripts/lib/echo-rounds.py server; }
pids+=($ECHO_PID)
read -r _ echo_port <&"${ECHO[0]}"

start_octunnel_vps "$work" "RekeyLimit 1M" "MaxStartups 200" "LogLevel DEBUG1"
user=$(id -un)
DELAY=${REKEY_DELAY_MS:-0}
vps_port=$ssh_port
if [ "$DELAY" -gt 0 ]; then
  vps_port=$(free_port)
  python3 scripts/lib/delay-relay.py 127.0.0.1 "$vps_port" 127.0.0.1 "$ssh_port" "$DELAY" >/dev/null 2>&1 & pids+=($!)
  wait_port "$vps_port"
fi

oct_port=$(free_port); ssh_lport=$(free_port)
declare -A procs   # the tunnel processes of each setup, whose CPU each round counts
"$OCT" tunnel up --home "$work/home" "$user@127.0.0.1:$vps_port" --local-port "$oct_port" --remote-port "$echo_port" --no-health 2>"$work/octunnel.log" &
pids+=($!); procs[oct]=$!
wait_port "$oct_port"
wait_line "$work/octunnel.log" "^connected to"
cipher=$(grep -o 'aes[0-9]*-ctr' "$work/octunnel.log" | head -1); mac=$(grep -o 'hmac-sha2-[0-9]*' "$work/octunnel.log" | head -1)
ssh -N -c "$cipher" -m "$mac" -i "$work/home/id_ed25519" -o UserKnownHostsFile="$work/home/known_hosts" -o BatchMode=yes \
    -o ExitOnForwardFailure=yes -L "127.0.0.1:$ssh_lport:127.0.0.1:$echo_port" -p "$vps_port" "$user@127.0.0.1" 2>"$work/ssh.log" &
pids+=($!); procs[ssh]=$!
wait_port "$ssh_lport"
HOME_ROWS=${REKEY_HOME:-1}
if [ "$HOME_ROWS" = 1 ]; then
  oct_rport=$(free_port); ssh_rport=$(free_port); octh_port=$(free_port); sshh_lport=$(free_port)
  "$OCT" home up --home "$work/home" "$user@127.0.0.1:$vps_port" --remote-port "$oct_rport" --home-port "$echo_port" --no-health 2>"$work/octunnel-home.log" &
  pids+=($!); procs[octh]=$!
  ssh -N -c "$cipher" -m "$mac" -i "$work/home/id_ed25519" -o UserKnownHostsFile="$work/home/known_hosts" -o BatchMode=yes \
      -o ExitOnForwardFailure=yes -R "127.0.0.1:$ssh_rport:127.0.0.1:$echo_port" -p "$vps_port" "$user@127.0.0.1" 2>"$work/ssh-home.log" &
  pids+=($!); procs[sshh]=$!
  wait_port "$oct_rport"; wait_port "$ssh_rport"
  "$OCT" tunnel up --home "$work/home" "$user@127.0.0.1:$vps_port" --local-port "$octh_port" --remote-port "$oct_rport" --no-health 2>"$work/octunnel-laptop.log" &
  pids+=($!); procs[octh]+=" $!"
  ssh -N -c "$cipher" -m "$mac" -i "$work/home/id_ed25519" -o UserKnownHostsFile="$work/home/known_hosts" -o BatchMode=yes \
      -o ExitOnForwardFailure=yes -L "127.0.0.1:$sshh_lport:127.0.0.1:$ssh_rport" -p "$vps_port" "$user@127.0.0.1" 2>"$work/ssh-laptop.log" &
  pids+=($!); procs[sshh]+=" $!"
  wait_port "$octh_port"; wait_port "$sshh_lport"
fi

rekeys() { grep -c 'SSH2_MSG_NEWKEYS received' "$work/sshd.log" || true; }
declare -A times intact cpu
ticks() { local p t=0; for p in $1; do t=$(( t + $(awk '{print $14+$15}' "/proc/$p/stat") )); done; echo "$t"; }
run_round() { # who port
  local before out t0; before=$(rekeys); t0=$(ticks "${procs[$1]}")
  out=$(python3 scripts/lib/echo-rounds.py client "$2" "$STREAMS" "$MIB" "$STALL")
  cpu[$1]+="$(awk -v d=$(( $(ticks "${procs[$1]}") - t0 )) -v hz="$(getconf CLK_TCK)" 'BEGIN {printf "%.2f", d/hz}') "
  times[$1]+="${out%% *} "
  intact[$1]=$(( ${intact[$1]:-0} + $(awk '$2 == $3 {print 1; exit} {print 0}' <<<"$out") ))
  echo "$1 round: $out ($(( $(rekeys) - before )) re-keys)" >&2
}
rounds() { # octunnel's name and port, ssh's name and port
  local i
  for i in $(seq "$ROUNDS"); do
    if (( i % 2 )); then run_round "$1" "$2"; run_round "$3" "$4"
    else run_round "$3" "$4"; run_round "$1" "$2"; fi
  done
}
rounds oct "$oct_port" ssh "$ssh_lport"
[ "$HOME_ROWS" = 1 ] && rounds octh "$octh_port" sshh "$sshh_lport"
median() { tr ' ' '\n' <<<"$1" | grep . | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
slowest() { tr ' ' '\n' <<<"$1" | grep . | sort -g | tail -1; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "n/a" }'; }
om=$(median "${times[oct]}"); sm=$(median "${times[ssh]}")
os=$(slowest "${times[oct]}"); ss=$(slowest "${times[ssh]}")
stalls=$(cat "$work"/octunnel*.log | grep -c 'stalled' || true)

echo "## Re-keys (issue 17)"
echo
echo "Written by \`scripts/bench-rekey.sh\` on $(date -u '+%Y-%m-%d %H:%M UTC'); load average at the end $(cut -d' ' -f1-3 /proc/loadavg)."
echo "One sshd with \`RekeyLimit 1M\` (a key exchange every MiB each way), an echo server behind it; $STREAMS connections"
echo "each send $MIB MiB and read the echo at once, bytes checked; $ROUNDS alternating rounds per tunnel, $(rekeys) re-keys in all."
[ "$DELAY" -gt 0 ] && echo "Both tunnels reach sshd through \`scripts/lib/delay-relay.py\`, $DELAY ms each way ($((2 * DELAY)) ms round trip)."
echo
echo "| measure | octunnel | ssh -L | ratio |"
echo "|---|---|---|---|"
echo "| re-keys: rounds with every byte of $STREAMS × $MIB MiB back | $((intact[oct])) / $ROUNDS | $((intact[ssh])) / $ROUNDS | |"
echo "| re-keys: a round, median s | $om | $sm | $(ratio "$om" "$sm") |"
echo "| re-keys: the slowest round, s | $os | $ss | $(ratio "$os" "$ss") |"
oc=$(median "${cpu[oct]}"); sc=$(median "${cpu[ssh]}")
echo "| re-keys: CPU s of the tunnel process a round, median | $oc | $sc | $(ratio "$oc" "$sc") |"
if [ "$HOME_ROWS" = 1 ]; then
  ohm=$(median "${times[octh]}"); shm=$(median "${times[sshh]}")
  ohs=$(slowest "${times[octh]}"); shs=$(slowest "${times[sshh]}")
  echo "| re-keys through both ends (tunnel up + home up vs ssh -L + ssh -R): rounds intact | $((intact[octh])) / $ROUNDS | $((intact[sshh])) / $ROUNDS | |"
  echo "| re-keys through both ends: a round, median s | $ohm | $shm | $(ratio "$ohm" "$shm") |"
  echo "| re-keys through both ends: the slowest round, s | $ohs | $shs | $(ratio "$ohs" "$shs") |"
  ohc=$(median "${cpu[octh]}"); shc=$(median "${cpu[sshh]}")
  echo "| re-keys through both ends: CPU s of both tunnel processes a round, median | $ohc | $shc | $(ratio "$ohc" "$shc") |"
fi
echo
echo "All rounds, s: octunnel ${times[oct]% }; ssh -L ${times[ssh]% }."
[ "$HOME_ROWS" = 1 ] && echo "Through both ends: octunnel ${times[octh]% }; ssh ${times[sshh]% }."
echo "octunnel named $stalls stalled stream(s) (\`streamStalled\`)."
