#!/usr/bin/env bash
# Issue 56's goals, octunnel `tunnel up` beside `ssh -N -L` in one run over an emulated WAN: a
# client namespace (both tunnels, the clients) and a VPS namespace (sshd, nginx) joined by a veth,
# BENCH_WAN_DELAY_MS (default 20) each way (tc netem, or scripts/lib/delay-relay.py in front of
# sshd where the kernel has no netem, as in scripts/bench.sh). The rows:
#   - 100 connections (wrk, BENCH_SECONDS long, default 5): p99 latency and requests/s;
#   - a new connection's answer, 6 at once, 20 at once every 0.7 s (scripts/lib/wan-probe.py,
#     BENCH_WAN_SAMPLES samples a run, default 5): medians of BENCH_REPEATS alternating runs (3);
#   - five `tunnel reconnect` while a client asks every 50 ms (scripts/lib/request-loop.py):
#     failed requests (octunnel only: ssh -L has no reconnect);
#   - idle after a burst: 30 s after 20 connections at once, each tunnel's TCP connections to sshd
#     (its sessions; `tunnel status --json`'s count beside, where it has one) and its wake-ups a
#     second over the next 30 s;
#   - the VPS down 10 s and 60 s (BENCH_OUTAGE_LONG=0 skips the 60 s one): sshd stopped by its PID
#     (its session children first; the relay with it, so that a connect is refused as by a rebooting
#     VPS), started again on the same port; served again N s after it listens (octunnel only: ssh -L
#     exits with its session). Last, as they end ssh -L's session.
# Root only. Run alone (`bash scripts/lib/issue56.sh`; OCT=path/to/octunnel to skip the release build;
# BENCH_I56_LABEL names the section, default the binary's version) or from scripts/bench.sh; either way
# it writes the section "Issue 56's goals: LABEL" of docs/benchmarks.md (BENCH_OUT: another file).
. "$(dirname "$0")/bench-prelude.sh"
SECS=${BENCH_SECONDS:-5}
REPEATS=${BENCH_REPEATS:-3}
SAMPLES=${BENCH_WAN_SAMPLES:-5}
DELAY=${BENCH_WAN_DELAY_MS:-20}
OUTAGE_LONG=${BENCH_OUTAGE_LONG:-1}
OUT=${BENCH_OUT:-docs/benchmarks.md}
[ "$(id -u)" -eq 0 ] || { echo "issue 56: skipped (not root: network namespaces need CAP_SYS_ADMIN and CAP_NET_ADMIN)" >&2; exit 0; }
for tool in wrk nginx curl; do command -v "$tool" >/dev/null || { echo "issue 56: $tool is not installed" >&2; exit 1; }; done
release_octunnel
LABEL=${BENCH_I56_LABEL:-$("$OCT" --version)}
scratch_dir issue56
load_start=$(cut -d' ' -f1-3 /proc/loadavg)
ms_now() { date +%s%3N; }
say() { echo "issue 56: $*" >&2; }

# The two namespaces and their link.
C="oct56-$$-$RANDOM-c"; S="${C%-c}-s"
ip netns add "$C"; namespaces+=("$C"); ip netns add "$S"; namespaces+=("$S")
net="10.$((200 + RANDOM % 50)).$((RANDOM % 256))"; server="$net.2"
ip -n "$C" link add wan0 type veth peer name wan0 netns "$S"
ip -n "$C" addr add "$net.1/30" dev wan0; ip -n "$S" addr add "$server/30" dev wan0
relay=""
for ns in "$C" "$S"; do
  ip -n "$ns" link set lo up; ip -n "$ns" link set wan0 up
  if [ "$DELAY" -gt 0 ] && ! ip netns exec "$ns" tc qdisc add dev wan0 root netem delay "${DELAY}ms" 2>/dev/null; then relay=yes; fi
done
inC() { ip netns exec "$C" "$@"; }

# The VPS: nginx (the health answer), sshd on port 22 (behind the relay on 2222 without netem).
web=8080
mkdir -p "$work/www/global" "$work/nginx"
echo '{"healthy":true,"version":"1.0.0"}' > "$work/www/global/health"
cat > "$work/nginx/nginx.conf" <<CONF
user root;
worker_processes 1;
daemon off;
pid $work/nginx/nginx.pid;
error_log $work/nginx/error.log;
events { worker_connections 4096; }
http { access_log off; keepalive_requests 1000000; server { listen 127.0.0.1:$web; root $work/www; default_type application/json; } }
CONF
ip netns exec "$S" nginx -c "$work/nginx/nginx.conf" -p "$work/nginx" & pids+=($!)
"$OCT" keygen --home "$work/home" >/dev/null 2>&1
ssh-keygen -q -t ed25519 -N '' -f "$work/hostkey"
"$OCT" pubkey --home "$work/home" > "$work/authorized_keys"
sshd_host=$server; sshd_port=22
[ -n "$relay" ] && { sshd_host=127.0.0.1; sshd_port=2222; }
write_sshd_config "$work/sshd_config" "$sshd_port" "$sshd_host" "$work/hostkey" "$work/authorized_keys" \
  "MaxStartups 200" "LogLevel VERBOSE" "PidFile $work/sshd.pid"
start_vps() { # sshd (and the relay), each listening when this returns; their PIDs in sshd_pid, relay_pid
  : > "$work/sshd.log"
  ip netns exec "$S" /usr/sbin/sshd -D -f "$work/sshd_config" -E "$work/sshd.log" </dev/null >/dev/null 2>&1 & sshd_pid=$!
  pids+=($sshd_pid)
  wait_line "$work/sshd.log" "Server listening on $sshd_host" || { say "sshd did not start: $(tail -2 "$work/sshd.log")"; exit 1; }
  if [ -n "$relay" ]; then
    : > "$work/relay.out"
    ip netns exec "$S" python3 scripts/lib/delay-relay.py "$server" 22 127.0.0.1 2222 "$DELAY" </dev/null >"$work/relay.out" 2>&1 &
    relay_pid=$!
    pids+=($relay_pid)
    wait_line "$work/relay.out" LISTENING || { say "the delay relay did not start: $(tail -2 "$work/relay.out")"; exit 1; }
  fi
}
stop_vps() { # sshd's session children first (they outlive it otherwise), then sshd and the relay
  local child
  for child in $(pgrep -P "$sshd_pid"); do kill "$child" $(descendants_of "$child") 2>/dev/null || true; done
  kill "$sshd_pid" 2>/dev/null || true; wait "$sshd_pid" 2>/dev/null || true
  if [ -n "$relay" ]; then kill "$relay_pid" 2>/dev/null || true; wait "$relay_pid" 2>/dev/null || true; fi
}
start_vps
user=$(id -un)

# The laptop: tunnel up, then ssh -N -L on the cipher and MAC octunnel negotiated; each started by
# `ip netns exec` itself (which execs it), not through a function, so that $! is its own PID.
oct=4096; ssh=4097
answered() { inC curl -sf -m 1 -o /dev/null "http://127.0.0.1:$1/global/health"; }
ready() { for _ in $(seq 300); do answered "$1" && return 0; sleep 0.05; done; say "port $1 never answered"; return 1; }
ip netns exec "$C" "$OCT" tunnel up --home "$work/home" "$user@$server:22" --local-port "$oct" --remote-port "$web" --no-health \
  2>"$work/octunnel.log" & oct_pid=$!; pids+=($oct_pid)
ready "$oct"
cipher=$(grep -o 'aes[0-9]*-ctr' "$work/octunnel.log" | head -1); mac=$(grep -o 'hmac-sha2-[0-9]*' "$work/octunnel.log" | head -1)
ip netns exec "$C" ssh -N -c "${cipher:-aes128-ctr}" -m "${mac:-hmac-sha2-256}" -i "$work/home/id_ed25519" -o UserKnownHostsFile="$work/home/known_hosts" \
  -o BatchMode=yes -o ExitOnForwardFailure=yes -L "127.0.0.1:$ssh:127.0.0.1:$web" -p 22 "$user@$server" 2>"$work/ssh.log" & ssh_pid=$!
pids+=($ssh_pid)
ready "$ssh"

in_us() { awk -v x="$1" 'BEGIN { if (x ~ /us$/) print x+0; else if (x ~ /ms$/) print (x+0)*1000; else if (x ~ /s$/) print (x+0)*1e6; else print x+0 }'; }
median_of() { local v; for v in "$@"; do printf '%s %s\n' "$(in_us "$v")" "$v"; done | sort -g | awk '{a[NR]=$2} END {print a[int((NR+1)/2)]}'; }
ratio() { awk -v a="$(in_us "$1")" -v b="$(in_us "$2")" 'BEGIN { if (b == 0) print "n/a"; else printf "%.2f", a / b }'; }
declare -A R

# 100 connections: wrk, alternating which tunnel goes first.
wrk_run() { # port → "rps p99"
  inC wrk -t2 -c100 -d"${SECS}s" --latency "http://127.0.0.1:$1/global/health" |
    awk '/Requests\/sec/ {r = $2} $1 == "99%" {p = $2} END {print r, p}'
}
say "100 connections (wrk, $REPEATS × $SECS s each)"
declare -a oct_rps oct_p99 ssh_rps ssh_p99
for i in $(seq "$REPEATS"); do
  for who in $( (( i % 2 )) && echo "oct ssh" || echo "ssh oct"); do
    port=$oct; [ "$who" = ssh ] && port=$ssh
    read -r rps p99 < <(wrk_run "$port")
    eval "${who}_rps+=(\"$rps\"); ${who}_p99+=(\"$p99\")"
  done
done
R[oct_rps]=$(median_of "${oct_rps[@]}"); R[ssh_rps]=$(median_of "${ssh_rps[@]}")
R[oct_p99]=$(median_of "${oct_p99[@]}"); R[ssh_p99]=$(median_of "${ssh_p99[@]}")

# New connections until their answers: medians over REPEATS alternating runs of SAMPLES samples.
probe_run() { inC python3 scripts/lib/wan-probe.py "$1" "$2" "$((SAMPLES + 1))" "$3" | tail -n +2; }
probe_pair() { # name conns pause → R[oct_name] R[ssh_name], R[*_name_all]
  local i a=() b=()
  for i in $(seq "$REPEATS"); do
    if (( i % 2 )); then a+=($(probe_run "$oct" "$2" "$3")); b+=($(probe_run "$ssh" "$2" "$3"))
    else b+=($(probe_run "$ssh" "$2" "$3")); a+=($(probe_run "$oct" "$2" "$3")); fi
  done
  R[oct_$1]=$(median_of "${a[@]}"); R[ssh_$1]=$(median_of "${b[@]}")
  R[oct_$1_all]="${a[*]}"; R[ssh_$1_all]="${b[*]}"
}
say "new connections: 1, 6 at once, 20 at once every 0.7 s"
probe_pair new 1 1.5
probe_pair burst6 6 1.5
probe_pair burst20 20 0.7

# Idle after a burst: 20 at once, then 30 s of nothing, then the sessions and 30 s of wake-ups.
say "idle after a burst (30 s, then 30 s counted)"
switches() { cat /proc/"$1"/task/*/status 2>/dev/null | awk '/ctxt_switches/ {n += $2} END {print n + 0}'; }
inC python3 scripts/lib/wan-probe.py "$oct" 20 1 0 >/dev/null; inC python3 scripts/lib/wan-probe.py "$ssh" 20 1 0 >/dev/null
sleep 30   # the idle time is the scenario
# The sessions each tunnel holds: its TCP connections to sshd's port (what status says, where it says it).
to_sshd() { inC ss -Htnp state established "( dport = :22 )" | grep -c "pid=$1," || true; }
R[oct_tcp]=$(to_sshd "$oct_pid"); R[ssh_tcp]=$(to_sshd "$ssh_pid")
o0=$(switches "$oct_pid"); s0=$(switches "$ssh_pid"); sleep 30; o1=$(switches "$oct_pid"); s1=$(switches "$ssh_pid")
R[oct_wake]=$(awk -v d=$((o1 - o0)) 'BEGIN {printf "%.2f", d / 30}'); R[ssh_wake]=$(awk -v d=$((s1 - s0)) 'BEGIN {printf "%.2f", d / 30}')
R[sessions]=$("$OCT" tunnel status --home "$work/home" --json | python3 -c '
import json, sys
status = json.load(sys.stdin)
count = next((status[k] for k in ("sessions", "sessionCount", "openSessions") if k in status), None)
print(len(count) if isinstance(count, list) else count if count is not None else "no field")')
R[sshd_sessions]=$(pgrep -c -P "$sshd_pid" || true)

# Five planned reconnects while a client asks every 50 ms through octunnel.
say "five tunnel reconnect while a client asks every 50 ms"
rm -f "$work/stop"
inC python3 scripts/lib/request-loop.py "$oct" 50 "$work/stop" > "$work/loop.out" & loop_pid=$!; pids+=($loop_pid)
sleep 1   # requests before the first reconnect
reconnect_s=()
for _ in 1 2 3 4 5; do
  reconnect_s+=($("$OCT" tunnel reconnect --home "$work/home" --json 2>>"$work/reconnect.err" |
    python3 -c 'import json, sys; print(next((str(json.loads(l)["seconds"]) for l in sys.stdin if "\"seconds\"" in l), "?"))' || echo "?"))
  sleep 1   # the spacing of the user's reconnects is the scenario
done
touch "$work/stop"; wait "$loop_pid" || true
R[loop_requests]=$(awk '$1 == "requests" {print $2}' "$work/loop.out"); R[loop_failed]=$(awk '$1 == "failed" {print $2}' "$work/loop.out")
R[loop_failures]=$(awk '$1 == "failure" {$1 = ""; print}' "$work/loop.out" | head -3 | paste -sd';')
R[reconnect_s]="${reconnect_s[*]}"

# The VPS down SECONDS: served again how long after sshd listens again (ssh -L ends here).
outage() { # name seconds → R[name]: ms from sshd listening again until octunnel answers (or "> 120000")
  stop_vps   # not in a subshell: sshd's PID stays known here
  sleep "$2"   # the outage's length is the scenario
  start_vps
  local t0; t0=$(ms_now)
  R[$1]="> 120000"
  for _ in $(seq 6000); do answered "$oct" && { R[$1]=$(( $(ms_now) - t0 )); return; }; sleep 0.02; done
}
say "the VPS down 10 s"
outage outage10 10
R[outage60]="skipped (BENCH_OUTAGE_LONG=0)"
if [ "$OUTAGE_LONG" != 0 ]; then say "the VPS down 60 s"; outage outage60 60; fi

seconds() { case "$1" in ">"*|skipped*) echo "$1";; *) awk -v ms="$1" 'BEGIN {printf "%.2f s", ms / 1000}';; esac; }
met() { case "$1" in skipped*) return;; esac; awk -v v="$1" -v b="$2" 'BEGIN { print (v != "" && v + 0 == v && v <= b) ? "met" : "not met" }'; }
section="$work/section.md"
{
  echo "## Issue 56's goals: $LABEL"
  echo
  echo "Written by \`scripts/lib/issue56.sh\` on $(date -u '+%Y-%m-%d %H:%M UTC'), $("$OCT" --version) ($(git rev-parse --short HEAD) checked out)."
  echo "Load average at the start: $load_start; at the end: $(cut -d' ' -f1-3 /proc/loadavg). octunnel \`tunnel up\` (its defaults)"
  echo "beside \`ssh -N -L\` on the same cipher and MAC ($cipher, $mac), in one run, through one sshd to one nginx over"
  if [ -n "$relay" ]; then
    echo "a veth between two namespaces, with no netem in this kernel: \`scripts/lib/delay-relay.py\` in front of sshd holds each chunk"
    echo "$DELAY ms each way ($((2 * DELAY)) ms added to every SSH round trip)."
  else
    echo "a veth between two namespaces, \`tc netem delay ${DELAY}ms\` on both ends ($((2 * DELAY)) ms round trip)."
  fi
  echo
  echo "| goal | octunnel | ssh -L | ratio | |"
  echo "|---|---|---|---|---|"
  r=$(ratio "${R[oct_p99]}" "${R[ssh_p99]}")
  echo "| 100 connections (wrk): p99 latency ≤ 2× ssh -L | ${R[oct_p99]} | ${R[ssh_p99]} | $r | $(met "$r" 2) |"
  echo "| 100 connections (wrk): requests/s | ${R[oct_rps]} | ${R[ssh_rps]} | $(ratio "${R[oct_rps]}" "${R[ssh_rps]}") | |"
  r=$(ratio "${R[oct_burst20]}" "${R[ssh_burst20]}")
  echo "| 20 new connections at once every 0.7 s ≤ 1.0× | ${R[oct_burst20]} ms | ${R[ssh_burst20]} ms | $r | $(met "$r" 1.0) |"
  r=$(ratio "${R[oct_new]}" "${R[ssh_new]}")
  echo "| a new connection's first answer ≤ 0.75× | ${R[oct_new]} ms | ${R[ssh_new]} ms | $r | $(met "$r" 0.75) |"
  r=$(ratio "${R[oct_burst6]}" "${R[ssh_burst6]}")
  echo "| 6 new connections at once ≤ 1.0× | ${R[oct_burst6]} ms | ${R[ssh_burst6]} ms | $r | $(met "$r" 1.0) |"
  echo "| five \`tunnel reconnect\` while a client asks every 50 ms: failed requests = 0 | ${R[loop_failed]} of ${R[loop_requests]} | n/a (no reconnect) | | $([ "${R[loop_failed]}" = 0 ] && echo met || echo "not met") |"
  echo "| the VPS down 10 s: served again ≤ 2 s after sshd is back | $(seconds "${R[outage10]}") | n/a (exits) | | $(met "${R[outage10]}" 2000) |"
  echo "| the VPS down 60 s: served again ≤ 3 s after sshd is back | $(seconds "${R[outage60]}") | n/a (exits) | | $(met "${R[outage60]}" 3000) |"
  echo "| 30 s after a burst of 20: sessions = 1 (TCP connections to sshd; \`tunnel status --json\`: ${R[sessions]}) |" \
    "${R[oct_tcp]} | ${R[ssh_tcp]} | | $([ "${R[oct_tcp]}" = 1 ] && echo met || echo "not met") |"
  echo "| 30 s after a burst of 20: wake-ups a second (context switches of all threads over the next 30 s) | ${R[oct_wake]} | ${R[ssh_wake]} | | |"
  echo
  echo "Rows of new connections: \`scripts/lib/wan-probe.py\` (connect, GET /global/health, the answer's last byte; N at once end at"
  echo "the last answer), medians of $REPEATS alternating runs × $SAMPLES samples after one warm-up sample, 1.5 s between samples (0.7 s"
  echo "for the 20). All, ms: 20 at once: octunnel ${R[oct_burst20_all]}; ssh -L ${R[ssh_burst20_all]}."
  echo "wrk: $SECS s a run, 2 threads, the median of $REPEATS alternating runs. The reconnect row: \`scripts/lib/request-loop.py\`"
  echo "(a new connection each request, answered whole within 5 s) from 1 s before the first reconnect to 1 s after the last;"
  echo "each \`tunnel reconnect\` took ${R[reconnect_s]} s.${R[loop_failures]:+ Failures: ${R[loop_failures]}.}"
  echo "The outage rows: sshd's session children and sshd stopped by PID$([ -n "$relay" ] && echo ", the relay with them (a connect is refused, as by a rebooting VPS)"),"
  echo "started again after the outage on the same port; timed from sshd listening again to the first answer through octunnel"
  echo "(curl every 20 ms). sshd's session children after the idle 30 s: ${R[sshd_sessions]} (both tunnels)."
} > "$section"
cat "$section"

# Replace this label's section in OUT (or append it), leaving the rest as it was.
python3 scripts/lib/replace-section.py "$section" "$OUT"
