#!/usr/bin/env bash
# octunnel vs `ssh -N -L` on this machine, in one run, through the same sshd to the same
# nginx backend, both on the cipher and MAC octunnel negotiates. Writes docs/benchmarks.md.
# Not part of the test suite. BENCH_SECONDS (default 5) is the length of each wrk run;
# BENCH_BULK_MB (default 1024) the size of the bulk download; BENCH_SHORT (default 10000) the
# number of short connections; BENCH_REPEATS (default 3) how many alternating wrk runs each
# request-rate row takes the median of. Then the same small requests and time to ready over an
# emulated WAN (root only: two network namespaces and tc netem, or a userspace delay relay
# where the kernel has no netem); BENCH_WAN_DELAY_MS (default 20) is the delay each way, so the
# round trip is twice that; 0 runs it over the bare veth; BENCH_WAN=0 skips it. The WAN part
# also times what users feel (scripts/lib/wan-probe.py): a new connection until its answer,
# 6 and 20 new connections at once (BENCH_WAN_SAMPLES samples per run, default 5, after one
# warm-up sample), and headless Chromium (Debian's chromium) loading a page of 30 images
# (BENCH_BROWSER_RUNS alternating runs, default 6; a fresh profile each run).
# BENCH_LOOPBACK=0 skips the loopback rows (for working on the WAN rows only).
# BENCH_WAN_ANSWERS_ONLY=1 keeps of the WAN part only the answers' rows (a permission answered from
# a terminal and from its notification, issue 48), and BENCH_OUT=FILE writes the table there
# instead of docs/benchmarks.md (for such a partial run).
# Last, the package's goals: scripts/package.sh --check from a clean clone (BENCH_PACKAGE=0 skips it,
# BENCH_PACKAGE_COLD=1 makes a new Debian root as on a new machine).
# Then the roaming rows (scripts/lib/roaming.sh, root only; BENCH_ROAM=0 skips them): time until
# each tunnel serves again after a network move and after a sleep with a move.
# Then issue 56's goals (scripts/lib/issue56.sh, root only; BENCH_I56=0 skips them, BENCH_OUTAGE_LONG=0
# skips their 60 s outage): over the WAN beside ssh -L, 100 connections, 20 at once every 0.7 s, the
# first connection, 6 at once; five planned reconnects under requests; the VPS down 10 s and 60 s; idle
# after a burst. Its own section of docs/benchmarks.md, "Issue 56's goals: LABEL" (BENCH_I56_LABEL).
# Then the port reclaim rows (scripts/lib/reclaim.sh, root only; BENCH_RECLAIM=0 skips them): a home
# reboot with a phone trying every 0.5 s, sshd reached directly, through sslh and through a TCP
# relay; printed, not written (docs/benchmarks.md's "Port reclaim behind a relay" keeps them).
# BENCH_REKEY=0 skips the re-keys section (scripts/bench-rekey.sh: RekeyLimit 1M, 8 x 16 MiB
# echoed both ways, 10 rounds; it also runs on its own: `bash scripts/bench-rekey.sh`).
# BENCH_SOAK=0 skips the soak section (scripts/soak.sh, BENCH_SOAK_SECONDS long, default 600).
# BENCH_DEB13=0 skips the bulk row on libssh2 1.11.1 (scripts/lib/bulk-deb13.sh, Debian 13's root).
# BENCH_PUSH=0 skips the phone push's section (scripts/lib/push-bench.sh: home, VPS and phone apart, issue 54's goals).
# BENCH_IDLE=0 skips the idle wake-ups section (scripts/idle-wakeups.sh: ssh -N -L and tunnel up
# with and without notifications, idle for IDLE_SECONDS, default 60).
# BENCH_VERSUS=PATH: the other side is that octunnel binary (another commit's release build) instead
# of ssh -N -L, named BENCH_VERSUS_NAME in the table: the same rows, written to
# docs/benchmarks-versus.md; the sections that only compare with OpenSSH (the goals of issue 10,
# re-keys, soak, package, roaming, reclaim, Debian 13) are skipped.
. "$(dirname "$0")/lib/bench-prelude.sh"
SECS=${BENCH_SECONDS:-5}
BULK_MB=${BENCH_BULK_MB:-1024}
SHORT=${BENCH_SHORT:-10000}
WAN_DELAY=${BENCH_WAN_DELAY_MS:-20}
VERSUS=${BENCH_VERSUS:-}
B_NAME="ssh -L"; OUT=docs/benchmarks.md
if [ -n "$VERSUS" ]; then
  B_NAME=${BENCH_VERSUS_NAME:-the other octunnel}; OUT=docs/benchmarks-versus.md
  for skip in BENCH_REKEY BENCH_SOAK BENCH_PACKAGE BENCH_ROAM BENCH_I56 BENCH_RECLAIM BENCH_DEB13 BENCH_IDLE; do export "$skip=0"; done
fi

. scripts/lib/packages.sh
install_missing "${OCTUNNEL_PACKAGES[@]}" nginx-light wrk curl iproute2 strace linux-perf chromium
LOOPBACK=${BENCH_LOOPBACK:-1}
OUT=${BENCH_OUT:-$OUT}
ANSWERS_ONLY=${BENCH_WAN_ANSWERS_ONLY:-0}
swift build -c release --product octunnel 2>&1 | tail -1
OCT="$(swift build -c release --show-bin-path)/octunnel"

load_start=$(cut -d' ' -f1-3 /proc/loadavg)
scratch_dir bench
wait_http() { for _ in $(seq 300); do curl -sf -o /dev/null "http://127.0.0.1:$1/global/health" && return 0; sleep 0.02; done; return 1; }
# wait_http inside network namespace $1 (one shell there polls, so no per-try namespace entry).
wait_http_in() {
  ip netns exec "$1" bash -c 'for _ in $(seq 300); do curl -sf -o /dev/null "http://127.0.0.1:$1/global/health" && exit 0; sleep 0.02; done; exit 1' _ "$2"
}
ms_now() { date +%s%3N; }
cpu_ticks() { awk '{print $14+$15}' "/proc/$1/stat"; }
rss_kib() { awk '/VmRSS/ {print $2}' "/proc/$1/status"; }
hwm_kib() { awk '/VmHWM/ {print $2}' "/proc/$1/status"; }
anon_kib() { awk '/RssAnon/ {print $2}' "/proc/$1/status"; }   # private memory: RSS without shared libraries

# The soak (issue 29): scripts/soak.sh for BENCH_SOAK_SECONDS (default 600) with its two busy
# loops, as a Markdown section; BENCH_SOAK=0 skips it.
soak_section() {
  local out status=0
  out=$(OCT="$OCT" SOAK_SECONDS="${BENCH_SOAK_SECONDS:-600}" bash scripts/soak.sh 2>&1) || status=$?
  value() { awk -v k="$1" '$1 == k {print $2; exit}' <<<"$out"; }
  echo "## The data-path soak (\`scripts/soak.sh\`, issue 29)"
  echo
  echo "Written by \`scripts/bench.sh\` on $(date -u '+%Y-%m-%d %H:%M UTC'): $(value seconds) s through \`tunnel up\` → sshd"
  echo "(\`RekeyLimit 512K\`) → \`home up\` → an echo server, two busy loops on the cores, \`tunnel reconnect\` and"
  echo "\`home reconnect\` in turn every 20 s, 20 connections at once every 15 s, a network move every 23 s (as root), 64"
  echo "workers; exit status $status (0: nothing out of place, hung or stalled)."
  echo
  echo "| measure | value | goal |"
  echo "|---|---|---|"
  echo "| connections (checked whole / cut by a reconnect, abandoned or reset) | $(value connections) ($(value checked) / $(value cut)) | ≥ 20,000 checked |"
  echo "| bytes sent + received | $(awk -v a="$(value bytes_sent)" -v b="$(value bytes_received)" 'BEGIN {printf "%.2f GiB", (a + b) / 1073741824}') | ≥ 10 GiB |"
  echo "| bytes out of place / connections hung / stalls named | $(value out_of_place) / $(value hung) / $(value stalls_named) | 0 / 0 / 0 |"
  echo "| re-keys (sshd's NEWKEYS) / sessions | $(value rekeys) / $(awk '$1 == "sessions" {print $2, $3}' <<<"$out") | |"
  echo "| network moves / \`tunnel up\`'s reconnects for its address gone; its new session up after each | $(value moves) /" \
    "$(value address_gone_reconnects); $(awk '$1 == "reconnected_after_move_s" {$1 = ""; print $0 "s"}' <<<"$out") | one a move; ≤ 0.5 s |"
  awk '$1 ~ /^pid_/ && $2 == "peak_rss_kib" {printf "| process %s: peak RSS / descriptors; RSS at 20%% → 60%% → end of the run; descriptors at 20%% → end | %d KiB / %d; %d → %d → %d KiB; %d → %d | flat |\n", $1, $3, $5, $7, $15, $9, $11, $13}' <<<"$out"
}

# The backend: nginx with a static health answer and a bulk file.
web_port=$(free_port)
mkdir -p "$work/www/global"
echo '{"healthy":true,"version":"1.0.0"}' > "$work/www/global/health"
truncate -s "${BULK_MB}M" "$work/www/bulk"
python3 scripts/lib/image-page.py "$work/www" 30   # the browser's page: page.html + img/0..29.png
write_nginx_config() { # DIR PORT: one worker serving $work/www on 127.0.0.1:PORT
  local user_line=""; [ "$(id -u)" -eq 0 ] && user_line="user root;"   # workers must read our private temp dir
  mkdir -p "$1"
  cat > "$1/nginx.conf" <<CONF
$user_line
worker_processes 1;
daemon off;
pid $1/nginx.pid;
error_log $1/error.log;
events { worker_connections 4096; }
http {
  access_log off;
  keepalive_requests 1000000;
  types { text/html html; image/png png; }
  server { listen 127.0.0.1:$2; root $work/www; default_type application/json; }
}
CONF
}
write_nginx_config "$work/nginx" "$web_port"
nginx -c "$work/nginx/nginx.conf" -p "$work/nginx" & pids+=($!)
wait_http "$web_port"

# The VPS: one sshd for both tunnels.
ssh_port=$(free_port)
"$OCT" keygen --home "$work/home" >/dev/null 2>&1
ssh-keygen -q -t ed25519 -N '' -f "$work/hostkey"
"$OCT" pubkey --home "$work/home" > "$work/authorized_keys"
write_sshd_config "$work/sshd_config" "$ssh_port" 127.0.0.1 "$work/hostkey" "$work/authorized_keys" \
  "MaxStartups 200" "LogLevel VERBOSE" "PidFile $work/sshd.pid"
/usr/sbin/sshd -D -f "$work/sshd_config" -E "$work/sshd.log" & pids+=($!)
for _ in $(seq 100); do (echo >/dev/tcp/127.0.0.1/$ssh_port) 2>/dev/null && break; sleep 0.05; done
user=$(id -un)

# The other side's tunnel in the background ($! is its pid): ssh -N -L on the cipher and MAC
# octunnel negotiated, or with BENCH_VERSUS the other octunnel's tunnel up.
b_up() { # namespace-or-empty local_port ssh_host ssh_port remote_port log
  local run=(); [ -n "$1" ] && run=(ip netns exec "$1")
  if [ -n "$VERSUS" ]; then
    # A home of its own (the same key): two tunnels in one home see each other's status socket,
    # and the first answering the second's probe once loaded 5 MB of ICU into it (the RSS rows
    # of 2026-11-26 measured that, not the versions).
    [ -d "$work/home-b" ] || { mkdir -m 700 "$work/home-b" && cp -p "$work/home"/id_ed25519 "$work/home"/id_ed25519.pub "$work/home-b/"; }
    "${run[@]}" "$VERSUS" tunnel up --home "$work/home-b" "$user@$3:$4" --local-port "$2" --remote-port "$5" --no-health 2>>"$6" &
  else
    "${run[@]}" ssh -N -c "$cipher" -m "$mac" -i "$work/home/id_ed25519" -o UserKnownHostsFile="$work/home/known_hosts" -o BatchMode=yes \
      -o ExitOnForwardFailure=yes -L "127.0.0.1:$2:127.0.0.1:$5" -p "$4" "$user@$3" 2>>"$6" &
  fi
}

# Start each tunnel and time launch → first healthy answer.
oct_port=$(free_port); ssh_lport=$(free_port)
t0=$(ms_now)
"$OCT" tunnel up --home "$work/home" "$user@127.0.0.1:$ssh_port" --local-port "$oct_port" --remote-port "$web_port" --no-health 2>"$work/octunnel.log" &
oct_pid=$!; pids+=($oct_pid)
wait_http "$oct_port"; oct_ready=$(( $(ms_now) - t0 ))
cipher=$(grep -o 'aes[0-9]*-ctr' "$work/octunnel.log" | head -1); mac=$(grep -o 'hmac-sha2-[0-9]*' "$work/octunnel.log" | head -1)
t0=$(ms_now)
b_up "" "$ssh_lport" 127.0.0.1 "$ssh_port" "$web_port" "$work/ssh.log"
ssh_pid=$!; pids+=($ssh_pid)
wait_http "$ssh_lport"; ssh_ready=$(( $(ms_now) - t0 ))

declare -A R
wrk_run() { # name port conns [namespace] → sets R[name_rps] R[name_p50] R[name_p99]
  local threads=2; [ "$3" -lt 2 ] && threads=1
  local run=(); [ -n "${4:-}" ] && run=(ip netns exec "$4")
  local out; out=$("${run[@]}" wrk -t"$threads" -c"$3" -d"${SECS}s" --latency "http://127.0.0.1:$2/global/health")
  R[${1}_rps]=$(awk '/Requests\/sec/ {print $2}' <<<"$out")
  R[${1}_p50]=$(awk '$1=="50%" {print $2}' <<<"$out")
  R[${1}_p99]=$(awk '$1=="99%" {print $2}' <<<"$out")
}
# The median of REPEATS runs for each of two tunnels, alternating which goes first, so a
# slow moment of the machine does not land on one side only.
REPEATS=${BENCH_REPEATS:-3}
in_us() { awk -v x="$1" 'BEGIN { if (x ~ /us$/) print x+0; else if (x ~ /ms$/) print (x+0)*1000; else if (x ~ /s$/) print (x+0)*1e6; else print x+0 }'; }
median_of() { # values… → the middle one by magnitude (units kept)
  local v; for v in "$@"; do printf '%s %s\n' "$(in_us "$v")" "$v"; done | sort -g | awk '{a[NR]=$2} END {print a[int((NR+1)/2)]}'
}
wrk_pair() { # name_a port_a name_b port_b conns [namespace] → medians in R[name_*]
  local i name metric
  for i in $(seq "$REPEATS"); do
    if (( i % 2 )); then wrk_run "$1_r$i" "$2" "$5" "${6:-}"; wrk_run "$3_r$i" "$4" "$5" "${6:-}"
    else wrk_run "$3_r$i" "$4" "$5" "${6:-}"; wrk_run "$1_r$i" "$2" "$5" "${6:-}"; fi
  done
  for name in "$1" "$3"; do
    for metric in rps p50 p99; do
      local values=(); for i in $(seq "$REPEATS"); do values+=("${R[${name}_r${i}_${metric}]}"); done
      R[${name}_${metric}]=$(median_of "${values[@]}")
    done
  done
}
prof_skip="the loopback part was skipped (BENCH_LOOPBACK=0)"
if [ "$LOOPBACK" = 1 ]; then
for c in 1 20 100; do
  wrk_pair "oct_c$c" "$oct_port" "ssh_c$c" "$ssh_lport" "$c"
done
oct_hwm=$(hwm_kib "$oct_pid"); ssh_hwm=$(hwm_kib "$ssh_pid")

# p99 of small requests while a bulk download runs on another connection: the median of REPEATS
# alternating runs (one run each was 31 vs 10 ms one day and 29 vs 14 the next, where 5
# alternating runs by hand gave 7.7 vs 7.7 ms).
busy=()
for i in $(seq "$REPEATS"); do
  order="oct ssh"; (( i % 2 )) || order="ssh oct"
  for who in $order; do
    port=$oct_port; [ "$who" = ssh ] && port=$ssh_lport
    curl -s -o /dev/null "http://127.0.0.1:$port/bulk" & dl=$!
    wrk_run "${who}_busy_r$i" "$port" 1
    wait "$dl" || true
  done
done
for who in oct ssh; do
  busy=(); for i in $(seq "$REPEATS"); do busy+=("${R[${who}_busy_r${i}_p99]}"); done
  R[${who}_busy_p99]=$(median_of "${busy[@]}")
done

# One bulk download, MB/s.
for who in oct ssh; do
  port=$oct_port; [ "$who" = ssh ] && port=$ssh_lport
  R[${who}_bulk]=$(curl -s -o /dev/null -w '%{speed_download}' "http://127.0.0.1:$port/bulk" | awk '{printf "%.0f", $1/1e6}')
done

# Idle CPU over 10 s.
a1=$(cpu_ticks "$oct_pid"); b1=$(cpu_ticks "$ssh_pid"); sleep 10; a2=$(cpu_ticks "$oct_pid"); b2=$(cpu_ticks "$ssh_pid")
hz=$(getconf CLK_TCK)
oct_idle=$(awk -v d=$((a2-a1)) -v hz="$hz" 'BEGIN {printf "%.2f", d/hz}'); ssh_idle=$(awk -v d=$((b2-b1)) -v hz="$hz" 'BEGIN {printf "%.2f", d/hz}')

# RSS after $SHORT short connections.
short() { python3 - "$1" "$SHORT" <<'PY'
import socket, sys
port = int(sys.argv[1])
for _ in range(int(sys.argv[2])):
    s = socket.create_connection(("127.0.0.1", port))
    s.sendall(b"GET /global/health HTTP/1.1\r\nHost: x\r\n\r\n")
    data = b""
    while not data.endswith(b"}\n"):  # the whole answer; the client closes first, as browsers do
        chunk = s.recv(65536)
        if not chunk: break
        data += chunk
    s.close()
PY
}
oct_rss0=$(rss_kib "$oct_pid"); short "$oct_port"; oct_rss1=$(rss_kib "$oct_pid"); oct_anon=$(anon_kib "$oct_pid")
ssh_rss0=$(rss_kib "$ssh_pid"); short "$ssh_lport"; ssh_rss1=$(rss_kib "$ssh_pid"); ssh_anon=$(anon_kib "$ssh_pid")

# Where the time goes, in this same run: system calls per request at 100 connections (strace)
# and each binary's share of the tunnel process's CPU samples (perf).
. scripts/lib/profile.sh
prof_skip=""
if command -v strace >/dev/null; then
  R[oct_sys]=$(syscalls_per_request "$oct_pid" "$oct_port" 100 3)
  R[ssh_sys]=$(syscalls_per_request "$ssh_pid" "$ssh_lport" 100 3)
fi
if perf_available; then
  R[oct_cpu_bulk]=$(cpu_shares "$oct_pid" "$work/perf-oct-bulk" -- curl -s -o /dev/null "http://127.0.0.1:$oct_port/bulk")
  R[ssh_cpu_bulk]=$(cpu_shares "$ssh_pid" "$work/perf-ssh-bulk" -- curl -s -o /dev/null "http://127.0.0.1:$ssh_lport/bulk")
  R[oct_cpu_small]=$(cpu_shares "$oct_pid" "$work/perf-oct-small" -- wrk -t2 -c100 -d3s "http://127.0.0.1:$oct_port/global/health")
  R[ssh_cpu_small]=$(cpu_shares "$ssh_pid" "$work/perf-ssh-small" -- wrk -t2 -c100 -d3s "http://127.0.0.1:$ssh_lport/global/health")
else
  prof_skip="perf cannot sample processes here"
fi
fi   # LOOPBACK

# The emulated WAN: namespaces $wan_c (the tunnels, wrk) and $wan_s (sshd, nginx) joined by
# a veth on a random 10.x.y.0/30, netem delaying each end's output by $WAN_DELAY ms.
wan_skip=""
wan_relay=""
wan_step() { # runs a setup command; on failure records why and fails
  local err; err=$("$@" 2>&1) || { wan_skip="\`$*\` failed: ${err//$'\n'/ }"; return 1; }
}
wan_setup() {
  [ "${BENCH_WAN:-1}" != 0 ] || { wan_skip="BENCH_WAN=0"; return 1; }
  [ "$(id -u)" -eq 0 ] || { wan_skip="not root (network namespaces need CAP_SYS_ADMIN and CAP_NET_ADMIN)"; return 1; }
  command -v ip >/dev/null && command -v tc >/dev/null || { wan_skip="iproute2 (ip, tc) is not installed"; return 1; }
  wan_c="octbench-$$-$RANDOM-c"; wan_s="${wan_c%-c}-s"
  wan_step ip netns add "$wan_c" || return 1; namespaces+=("$wan_c")
  wan_step ip netns add "$wan_s" || return 1; namespaces+=("$wan_s")
  local net="10.$((200 + RANDOM % 50)).$((RANDOM % 256))"
  wan_server="$net.2"
  wan_step ip -n "$wan_c" link add wan0 type veth peer name wan0 netns "$wan_s" || return 1
  wan_step ip -n "$wan_c" addr add "$net.1/30" dev wan0 || return 1
  wan_step ip -n "$wan_s" addr add "$net.2/30" dev wan0 || return 1
  local ns
  for ns in "$wan_c" "$wan_s"; do
    wan_step ip -n "$ns" link set lo up || return 1
    wan_step ip -n "$ns" link set wan0 up || return 1
    if [ "$WAN_DELAY" -gt 0 ]; then
      local err
      # Kernels built without netem (CONFIG_NET_SCH_NETEM unset, as on some VMs): a userspace
      # relay in front of sshd delays each chunk instead (scripts/lib/delay-relay.py).
      err=$(ip netns exec "$ns" tc qdisc add dev wan0 root netem delay "${WAN_DELAY}ms" 2>&1) || {
        wan_relay="tc netem is not available in this kernel (tc: ${err//$'\n'/ })"; }
    fi
  done
}
if wan_setup; then
  echo "emulated WAN: $wan_c ↔ $wan_s, ${WAN_DELAY} ms each way" >&2
  wan_web=$(free_port); wan_oct=$(free_port); wan_ssh=$(free_port)   # the namespaces are empty: any port is free
  write_nginx_config "$work/nginx-wan" "$wan_web"
  ip netns exec "$wan_s" nginx -c "$work/nginx-wan/nginx.conf" -p "$work/nginx-wan" & pids+=($!)
  wait_http_in "$wan_s" "$wan_web"
  sshd_host=$wan_server; sshd_port=22
  [ -n "$wan_relay" ] && { sshd_host=127.0.0.1; sshd_port=2222; }
  write_sshd_config "$work/sshd_config_wan" "$sshd_port" "$sshd_host" "$work/hostkey" "$work/authorized_keys" \
    "MaxStartups 200" "LogLevel VERBOSE" "PidFile $work/sshd-wan.pid"
  ip netns exec "$wan_s" /usr/sbin/sshd -D -f "$work/sshd_config_wan" -E "$work/sshd-wan.log" & pids+=($!)
  for _ in $(seq 100); do grep -q "Server listening on $sshd_host" "$work/sshd-wan.log" 2>/dev/null && break; sleep 0.05; done
  if [ -n "$wan_relay" ]; then
    echo "$wan_relay: delaying in userspace instead" >&2
    ip netns exec "$wan_s" python3 scripts/lib/delay-relay.py "$wan_server" 22 127.0.0.1 2222 "$WAN_DELAY" >"$work/relay.out" 2>&1 & pids+=($!)
    for _ in $(seq 100); do grep -q LISTENING "$work/relay.out" 2>/dev/null && break; sleep 0.05; done
  fi
  t0=$(ms_now)
  ip netns exec "$wan_c" "$OCT" tunnel up --home "$work/home" "$user@$wan_server:22" --local-port "$wan_oct" --remote-port "$wan_web" \
    --no-health 2>"$work/octunnel-wan.log" & pids+=($!)
  wait_http_in "$wan_c" "$wan_oct"; R[wan_oct_ready]=$(( $(ms_now) - t0 ))
  t0=$(ms_now)
  b_up "$wan_c" "$wan_ssh" "$wan_server" 22 "$wan_web" "$work/ssh-wan.log"
  pids+=($!)
  wait_http_in "$wan_c" "$wan_ssh"; R[wan_ssh_ready]=$(( $(ms_now) - t0 ))
  if [ "$LOOPBACK" = 1 ]; then
  for c in 1 20 100; do
    wrk_pair "wan_oct_c$c" "$wan_oct" "wan_ssh_c$c" "$wan_ssh" "$c" "$wan_c"
  done
  fi

  # What users feel: new connections until their answers, alternating, medians of every sample.
  WAN_SAMPLES=${BENCH_WAN_SAMPLES:-5}
  probe_run() { # port conns → WAN_SAMPLES times in ms, one a line (the first, warm-up, sample dropped)
    ip netns exec "$wan_c" python3 scripts/lib/wan-probe.py "$1" "$2" "$((WAN_SAMPLES + 1))" 1.5 | tail -n +2
  }
  probe_pair() { # name conns port_a port_b → R[wan_oct_name] R[wan_ssh_name]: medians over REPEATS alternating runs
    local i a=() b=()
    for i in $(seq "$REPEATS"); do
      if (( i % 2 )); then a+=($(probe_run "$3" "$2")); b+=($(probe_run "$4" "$2"))
      else b+=($(probe_run "$4" "$2")); a+=($(probe_run "$3" "$2")); fi
    done
    R[wan_oct_$1]=$(median_of "${a[@]}"); R[wan_ssh_$1]=$(median_of "${b[@]}")
  }
  relay_pid=""; [ -n "$wan_relay" ] && relay_pid=$(pgrep -f "delay-relay.py $wan_server 22 " | head -1)
  [ -n "$relay_pid" ] && relay_t0=$(cpu_ticks "$relay_pid") && relay_ms0=$(ms_now)
  if [ "$ANSWERS_ONLY" != 1 ]; then
  probe_pair new 1 "$wan_oct" "$wan_ssh"
  probe_pair burst6 6 "$wan_oct" "$wan_ssh"
  probe_pair burst20 20 "$wan_oct" "$wan_ssh"
  # The same 20 with the pool fixed at 20 (--warm 20) instead of following demand (at most 32).
  wan_oct20=$(free_port)
  ip netns exec "$wan_c" "$OCT" tunnel up --home "$work/home" "$user@$wan_server:22" --local-port "$wan_oct20" --remote-port "$wan_web" \
    --no-health --warm 20 2>"$work/octunnel-wan20.log" & pids+=($!)
  wait_http_in "$wan_c" "$wan_oct20"
  probe_pair burst20warm 20 "$wan_oct20" "$wan_ssh"

  # The first page after launch: a fresh tunnel each run, nothing learned yet; 6 at once (a
  # browser's first page) 1 s after the tunnel's first answer (the user switching to the browser).
  cold_run() { # oct|ssh → ms
    local port pid; port=$(free_port)
    if [ "$1" = oct ]; then
      ip netns exec "$wan_c" "$OCT" tunnel up --home "$work/home" "$user@$wan_server:22" --local-port "$port" \
        --remote-port "$wan_web" --no-health 2>>"$work/octunnel-cold.log" &
    else
      b_up "$wan_c" "$port" "$wan_server" 22 "$wan_web" "$work/ssh-cold.log"
    fi
    pid=$!
    wait_http_in "$wan_c" "$port" && sleep 1 && ip netns exec "$wan_c" python3 scripts/lib/wan-probe.py "$port" 6 1 0
    kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null || true
  }
  a=(); b=()
  for i in $(seq "$((REPEATS * 2))"); do
    if (( i % 2 )); then a+=($(cold_run oct)); b+=($(cold_run ssh))
    else b+=($(cold_run ssh)); a+=($(cold_run oct)); fi
  done
  R[wan_oct_cold6]=$(median_of "${a[@]}"); R[wan_ssh_cold6]=$(median_of "${b[@]}")
  R[wan_oct_cold6_all]="${a[*]}"; R[wan_ssh_cold6_all]="${b[*]}"

  # A real browser: headless Chromium, a fresh profile each run, navigation start → load event.
  BROWSER_RUNS=${BENCH_BROWSER_RUNS:-6}
  browser_run() { # port → ms
    local profile; profile=$(mktemp -d "$work/chromium.XXXXXX")
    ip netns exec "$wan_c" timeout 60 chromium --headless --no-sandbox --disable-gpu --no-first-run --user-data-dir="$profile" \
      --dump-dom "http://127.0.0.1:$1/page.html" 2>/dev/null | grep -o 'LOAD [0-9.]*' | awk '{print $2}'
    rm -rf "$profile"
  }
  if command -v chromium >/dev/null; then
    browser_run "$wan_oct" >/dev/null; browser_run "$wan_ssh" >/dev/null   # warm-up: the disk cache of chromium itself
    a=(); b=()
    for i in $(seq "$BROWSER_RUNS"); do
      if (( i % 2 )); then a+=($(browser_run "$wan_oct")); b+=($(browser_run "$wan_ssh"))
      else b+=($(browser_run "$wan_ssh")); a+=($(browser_run "$wan_oct")); fi
    done
    R[wan_oct_browser]=$(median_of "${a[@]}"); R[wan_ssh_browser]=$(median_of "${b[@]}")
    R[wan_oct_browser_all]="${a[*]}"; R[wan_ssh_browser_all]="${b[*]}"
  fi
  . scripts/lib/notify-latency.sh
  notify_latency
  fi   # ANSWERS_ONLY
  . scripts/lib/permission-latency.sh
  permission_latency
  . scripts/lib/notification-answer-latency.sh
  notification_answer_latency
  if [ -n "$relay_pid" ]; then
    R[relay_cpu]=$(awk -v d=$(( $(cpu_ticks "$relay_pid") - relay_t0 )) -v hz="$(getconf CLK_TCK)" -v ms=$(( $(ms_now) - relay_ms0 )) \
      'BEGIN {printf "%.1f", 100 * d / hz / (ms / 1000)}')
    # The relay's own cost: a new connection + GET straight to the web server, and the same
    # through a second relay instance holding nothing (0 ms), both inside the VPS namespace.
    relay0=$(free_port)
    ip netns exec "$wan_s" python3 scripts/lib/delay-relay.py 127.0.0.1 "$relay0" 127.0.0.1 "$wan_web" 0 >"$work/relay0.out" 2>&1 & pids+=($!)
    for _ in $(seq 100); do grep -q LISTENING "$work/relay0.out" 2>/dev/null && break; sleep 0.05; done
    direct=(); relayed=()
    for i in $(seq "$REPEATS"); do
      direct+=($(ip netns exec "$wan_s" python3 scripts/lib/wan-probe.py "$wan_web" 1 "$((WAN_SAMPLES * 4 + 1))" 0.02 | tail -n +2))
      relayed+=($(ip netns exec "$wan_s" python3 scripts/lib/wan-probe.py "$relay0" 1 "$((WAN_SAMPLES * 4 + 1))" 0.02 | tail -n +2))
    done
    R[relay_direct]=$(median_of "${direct[@]}"); R[relay_zero]=$(median_of "${relayed[@]}")
  fi
else
  echo "emulated WAN skipped: $wan_skip" >&2
fi

ratio() { awk -v a="$(in_us "$1")" -v b="$(in_us "$2")" 'BEGIN { if (b == 0) print "n/a"; else printf "%.2f", a / b }'; }
row() { printf '| %s | %s | %s | %s |\n' "$1" "$2" "$3" "$(ratio "$2" "$3")"; }
{
  if [ -n "$VERSUS" ]; then echo "# Benchmarks: octunnel (this tree) vs $B_NAME, side by side"; else echo "# Benchmarks: octunnel vs ssh -N -L"; fi
  echo
  echo "Written by \`scripts/bench.sh\` on $(date -u '+%Y-%m-%d %H:%M UTC'); $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo);"
  echo "$(uname -sr); libssh2 $(dpkg-query -W -f='${Version}' libssh2-1); $(ssh -V 2>&1); both tunnels on $cipher + $mac,"
  echo "same sshd, same nginx backend, loopback, wrk -t2 for ${SECS} s a run, the median of ${REPEATS} alternating runs per row. Ratio = octunnel / $B_NAME (higher is better for"
  echo "rates and MB/s, lower is better for latency, CPU and memory)."
  echo "Load average (1, 5, 15 min) at the start: $load_start; at the end: $(cut -d' ' -f1-3 /proc/loadavg) (on 2 cores:"
  echo "above 2 means other work shared the machine during the run, which widens every row's noise)."
  echo
  echo "| measure | octunnel | $B_NAME | ratio |"
  echo "|---|---|---|---|"
  if [ "$LOOPBACK" = 1 ]; then
  for c in 1 20 100; do
    row "requests/s, $c connections" "${R[oct_c${c}_rps]}" "${R[ssh_c${c}_rps]}"
    row "p50 latency, $c connections" "${R[oct_c${c}_p50]}" "${R[ssh_c${c}_p50]}"
    row "p99 latency, $c connections" "${R[oct_c${c}_p99]}" "${R[ssh_c${c}_p99]}"
  done
  row "p99 latency during a bulk download" "${R[oct_busy_p99]}" "${R[ssh_busy_p99]}"
  row "bulk download ${BULK_MB} MiB, MB/s" "${R[oct_bulk]}" "${R[ssh_bulk]}"
  row "launch → first health answer, ms" "$oct_ready" "$ssh_ready"
  row "CPU s over 10 idle s" "$oct_idle" "$ssh_idle"
  row "peak RSS KiB (after 100 connections)" "$oct_hwm" "$ssh_hwm"
  row "RSS KiB before $SHORT short connections" "$oct_rss0" "$ssh_rss0"
  row "RSS KiB after $SHORT short connections" "$oct_rss1" "$ssh_rss1"
  row "private memory (RssAnon) KiB after them" "$oct_anon" "$ssh_anon"
  fi
  if [ -z "$wan_skip" ]; then
    wan="WAN $((2 * WAN_DELAY)) ms RTT"; [ "$WAN_DELAY" -gt 0 ] || wan="veth, no delay"
    [ "$LOOPBACK" = 1 ] && for c in 1 20 100; do
      row "$wan: requests/s, $c connections" "${R[wan_oct_c${c}_rps]}" "${R[wan_ssh_c${c}_rps]}"
      row "$wan: p50 latency, $c connections" "${R[wan_oct_c${c}_p50]}" "${R[wan_ssh_c${c}_p50]}"
      row "$wan: p99 latency, $c connections" "${R[wan_oct_c${c}_p99]}" "${R[wan_ssh_c${c}_p99]}"
    done
    row "$wan: launch → first health answer, ms" "${R[wan_oct_ready]}" "${R[wan_ssh_ready]}"
    [ "$ANSWERS_ONLY" != 1 ] && {
    row "$wan: a NEW connection: connect + GET until the answer, ms" "${R[wan_oct_new]}" "${R[wan_ssh_new]}"
    row "$wan: 6 new connections at once, until the last answer, ms" "${R[wan_oct_burst6]}" "${R[wan_ssh_burst6]}"
    row "$wan: 20 new connections at once, until the last answer, ms" "${R[wan_oct_burst20]}" "${R[wan_ssh_burst20]}"
    row "$wan: 20 at once, octunnel --warm 20, ms" "${R[wan_oct_burst20warm]}" "${R[wan_ssh_burst20warm]}"
    row "$wan: the first 6 at once after launch (a fresh tunnel, nothing learned), ms" "${R[wan_oct_cold6]}" "${R[wan_ssh_cold6]}"
    }
    [ -n "${R[wan_oct_browser]:-}" ] && row "$wan: headless Chromium, page of 30 images, navigation → load, ms" "${R[wan_oct_browser]}" "${R[wan_ssh_browser]}"
    if [ -n "${R[wan_oct_notify_perm]:-}" ]; then
      row "$wan: OpenCode sends 'permission asked' → --notify-command runs (other: the event reaches a client), ms" "${R[wan_oct_notify_perm]}" "${R[wan_ssh_notify_perm]}"
      row "$wan: OpenCode sends the idle → 'finished' runs the command (incl. the 0.5 s settle; other: the event arrives), ms" "${R[wan_oct_notify_finished]}" "${R[wan_ssh_notify_finished]}"
    fi
    [ -n "${R[wan_oct_permission]:-}" ] &&
      row "$wan: \`octunnel permission allow ID\` until OpenCode has the reply (other: the reply's POST alone), ms" "${R[wan_oct_permission]}" "${R[wan_ssh_permission]}"
    [ -n "${R[wan_oct_click]:-}" ] &&
      row "$wan: a permission's notification, \"Allow once\" clicked (dunst) until OpenCode has the reply (other: the reply's POST alone), ms" "${R[wan_oct_click]}" "${R[wan_ssh_permission]:-}"
  fi
  echo
  if [ -z "$wan_skip" ]; then
    echo "$wan rows: the client (tunnel and wrk) and the VPS (sshd and nginx) in two network namespaces joined by a veth,"
    if [ -n "$wan_relay" ]; then
      echo "$wan_relay, so a userspace relay in front of sshd (\`scripts/lib/delay-relay.py\`) holds each chunk ${WAN_DELAY} ms"
      echo "each way ($((2 * WAN_DELAY)) ms added to every SSH round trip; TCP's own handshake and ACKs are not delayed), same key, cipher and MAC."
    elif [ "$WAN_DELAY" -gt 0 ]; then
      echo "\`tc netem delay ${WAN_DELAY}ms\` on both ends ($((2 * WAN_DELAY)) ms round trip), same key, cipher and MAC."
    else
      echo "no delay added (BENCH_WAN_DELAY_MS=0), same key, cipher and MAC."
    fi
    echo
    [ "$ANSWERS_ONLY" != 1 ] && {
    echo "The NEW-connection rows time what a user feels (\`scripts/lib/wan-probe.py\`): connect, send GET /global/health,"
    echo "stop at the answer's last byte; N connections at once end at the last answer. Each row is the median of"
    echo "$REPEATS alternating runs × $WAN_SAMPLES samples, each run after one warm-up sample, 1.5 s between samples (a user's"
    echo "pause: octunnel refills its pool of channels opened ahead of need in it, one open per round trip, so 20 take"
    echo "0.8 s). octunnel follows demand: its pool is the largest burst of the last 3 minutes, 1 to 32 channels (six for"
    echo "3 minutes after each connect); the"
    echo "--warm 20 row fixes it at 20. A burst larger than the pool opens the rest one round trip each (libssh2 1.10.0:"
    echo "one channel open in flight per session)."
    echo "The after-launch row starts a fresh tunnel for each of $((REPEATS * 2)) alternating runs and opens 6 connections at once 1 s"
    echo "after its first answer; all runs, ms: octunnel ${R[wan_oct_cold6_all]}; $B_NAME ${R[wan_ssh_cold6_all]}."
    }
    if [ -n "${R[wan_oct_browser]:-}" ]; then
      echo "The browser row: Debian's chromium, headless, a fresh profile each run, loading page.html and its 30 PNGs"
      echo "(\`scripts/lib/image-page.py\`, served by the same nginx); the page's load handler reports navigation start →"
      echo "load event. Median of $BROWSER_RUNS alternating runs; all runs, ms: octunnel ${R[wan_oct_browser_all]}; $B_NAME ${R[wan_ssh_browser_all]}."
    fi
    # note MEASURED SKIPPED NAME TEXT: "NAME TEXT" (TEXT's lines as they are) when R[MEASURED] holds a measurement,
    # else "NAME: not measured (why)." when R[SKIPPED] says why, else nothing.
    note() {
      if [ -n "${R[$1]:-}" ]; then printf '%s %s\n' "$3" "$4"
      elif [ -n "${R[$2]:-}" ]; then echo "$3: not measured (${R[$2]})."
      fi
    }
    note wan_oct_notify_perm wan_notify_skip "The notification rows" \
      "(\`scripts/lib/notify-latency.sh\`, issue 40): the OpenCode stand-in (1.x) on the VPS side, \`tunnel up\`
with --notify-command (a program that writes the time it ran); the other tunnel carries the same event stream to a
client reading it, which is all a tunnel that does not notify can give. From just before the event's POST on the VPS
side; medians of ${R[wan_notify_samples]} samples; all, ms: ${R[wan_notify_all]}."
    note wan_oct_permission wan_permission_skip "The permission row" \
      "(\`scripts/lib/permission-latency.sh\`, issue 48): a pending permission on the stand-in (1.x); the whole
\`octunnel permission allow\` process (start, the status socket, the pending list and the reply, each over the WAN) until it
exits with OpenCode's answer, against the reply's one POST through the other tunnel; medians of ${R[wan_permission_samples]} samples;
all, ms: ${R[wan_permission_all]}."
    note wan_oct_click wan_click_skip "The click row" \
      "(\`scripts/lib/notification-answer-latency.sh\`, issue 48): a desktop of the bench's own (dbus-daemon, Xvfb,
dunst); each sample asks a permission on the stand-in (1.x), its notification comes down the event stream with its actions, and
\"Allow once\" is clicked through dunst's menu (\`dunstctl context\`, the action picked, as a user's click) when it is on screen;
timed from the click until the stand-in recorded the reply (octunnel lists the pending requests, then replies, each over the WAN),
against the reply's one POST through the other tunnel; median of ${R[wan_click_samples]} samples; all, ms: ${R[wan_click_all]}."
    if [ -n "${R[relay_cpu]:-}" ]; then
      echo "The relay's own cost: a new connection + GET through a second relay instance holding nothing (0 ms) took"
      echo "${R[relay_zero]} ms against ${R[relay_direct]} ms straight to nginx (medians, inside the VPS namespace), and the relay"
      echo "used ${R[relay_cpu]}% of one core during the new-connection and browser rows: it is not the bottleneck."
    fi
  else
    echo "Emulated WAN (network namespaces + netem): skipped: $wan_skip."
  fi
  if [ -z "$wan_skip" ] && { [ -n "${R[wan_oct_new]:-}" ] || [ "$ANSWERS_ONLY" = 1 ]; } && [ -z "$VERSUS" ]; then
    goal() { # text octunnel ssh bound → a row: ratio and whether it is at most the bound
      local r; r=$(ratio "$2" "$3")
      printf '| %s | %s ms | %s ms | %s | %s |\n' "$1" "$2" "$3" "$r" "$(awk -v r="$r" -v b="$4" 'BEGIN { print (r != "n/a" && r <= b) ? "met" : "not met" }')"
    }
    echo
    echo "## Against the goals of issues 10 and 40 ($wan)"
    echo
    echo "| goal | octunnel | ssh -L | ratio | |"
    echo "|---|---|---|---|---|"
    [ "$ANSWERS_ONLY" != 1 ] && {
    goal "a new connection's first answer ≤ 0.75× ssh -L" "${R[wan_oct_new]}" "${R[wan_ssh_new]}" 0.75
    goal "6 new connections at once ≤ 1.0×" "${R[wan_oct_burst6]}" "${R[wan_ssh_burst6]}" 1.0
    goal "20 new connections at once ≤ 1.0× (pool following demand, after one burst of 20)" "${R[wan_oct_burst20]}" "${R[wan_ssh_burst20]}" 1.0
    goal "20 new connections at once ≤ 1.0× with --warm 20" "${R[wan_oct_burst20warm]}" "${R[wan_ssh_burst20warm]}" 1.0
    }
    [ -n "${R[wan_oct_browser]:-}" ] && goal "a real browser's page load ≤ 0.95×" "${R[wan_oct_browser]}" "${R[wan_ssh_browser]}" 0.95
    if [ -n "${R[wan_oct_notify_perm]:-}" ]; then
      within() { awk -v v="$1" 'BEGIN { print (v <= 1000) ? "met" : "not met" }'; }
      printf '| %s | %s ms | %s ms | | %s |\n' "issue 40: permission asked → notified ≤ 1 s" "${R[wan_oct_notify_perm]}" "${R[wan_ssh_notify_perm]}" "$(within "${R[wan_oct_notify_perm]}")"
      printf '| %s | %s ms | %s ms | | %s |\n' "issue 40: idle → 'finished' notified ≤ 1 s (0.5 s of it the settle)" "${R[wan_oct_notify_finished]}" "${R[wan_ssh_notify_finished]}" "$(within "${R[wan_oct_notify_finished]}")"
    fi
    if [ -n "${R[wan_oct_permission]:-}" ]; then
      printf '| %s | %s ms | %s ms | | %s |\n' "issue 48: a permission answered from a terminal reaches OpenCode ≤ 1 s" "${R[wan_oct_permission]}" "${R[wan_ssh_permission]}" \
        "$(awk -v v="${R[wan_oct_permission]}" 'BEGIN { print (v <= 1000) ? "met" : "not met" }')"
    fi
    if [ -n "${R[wan_oct_click]:-}" ]; then
      printf '| %s | %s ms | %s ms | | %s |\n' "issue 48: a permission answered from its notification reaches OpenCode ≤ 1 s of the click" "${R[wan_oct_click]}" \
        "${R[wan_ssh_permission]:-}" "$(awk -v v="${R[wan_oct_click]}" 'BEGIN { print (v <= 1000) ? "met" : "not met" }')"
    fi
  fi
  echo
  echo "## Where the time goes (same run)"
  echo
  echo "- System calls per small request at 100 connections (strace -c over 3 s of wrk; calls above 0.05 a request named):"
  echo "  octunnel ${R[oct_sys]:-not measured (no strace)}; $B_NAME ${R[ssh_sys]:-not measured}."
  if [ -z "$prof_skip" ]; then
    echo "- Share of the tunnel process's CPU samples by binary (perf record -F 999), during one ${BULK_MB} MiB download:"
    echo "  octunnel: ${R[oct_cpu_bulk]}; $B_NAME: ${R[ssh_cpu_bulk]}."
    echo "- The same during 3 s of small requests at 100 connections:"
    echo "  octunnel: ${R[oct_cpu_small]}; $B_NAME: ${R[ssh_cpu_small]}."
  else
    echo "- CPU shares by binary: not measured ($prof_skip)."
  fi
  if [ -z "$VERSUS" ]; then
  echo
  echo "How to read these: octunnel's own code is the \"octunnel\" share. The bulk rate is bounded by libssh2 1.10.0,"
  echo "which calls OpenSSL once per 16-byte cipher block and MAC (transport.c); OpenSSH encrypts whole packets. The team's"
  echo "notes measured 175-270 MB/s for a careful single-thread C forwarder on libssh2 1.10.0 on this kind of machine; octunnel's"
  echo "own code is a fraction of a percent of the samples during the download. The"
  echo "small-request rate is bounded by system calls and the kernel's loopback path, where octunnel makes as many"
  echo "calls per request as ssh since it batches libssh2's socket I/O (docs/architecture.md, \"The send path\")."
  if [ -z "$wan_skip" ]; then
    echo "Over the emulated WAN, each request on an open connection takes one round trip through either tunnel (the p50"
    echo "rows). The p99 and request-rate rows at 20 and 100 connections also count opening the connections: libssh2 1.10.0"
    echo "keeps one channel open in flight per session (its open state lives in the session, channel.c), so connections"
    echo "beyond octunnel's pool of channels opened ahead of need (at most 32 unless --warm says otherwise) open one round"
    echo "trip each, where ssh -L opens them all at once (docs/architecture.md, \"One channel open at a time\")."
  fi
  fi   # not VERSUS
  if [ "${BENCH_REKEY:-1}" = 1 ]; then
    echo
    OCT="$OCT" bash scripts/bench-rekey.sh || echo "Re-keys: \`scripts/bench-rekey.sh\` failed (see its output above)."
  fi
  if [ "${BENCH_SOAK:-1}" = 1 ]; then
    echo
    soak_section
  fi
} > "$OUT"

# The package (issue 20): scripts/package.sh --check from a clean clone of this commit, with the Debian
# root it has cached (BENCH_PACKAGE_COLD=1: a new one, as on a new machine; BENCH_PACKAGE=0 skips).
if [ "${BENCH_PACKAGE:-1}" != 0 ]; then
  git clone -q . "$work/package-clone"
  root_cache=(); [ "${BENCH_PACKAGE_COLD:-0}" = 1 ] && root_cache=("OCTUNNEL_ROOT_CACHE=$work/root-cache/bookworm-minbase")
  if env ${root_cache[@]+"${root_cache[@]}"} PACKAGE_MEASUREMENTS="$work/package.txt" \
       bash "$work/package-clone/scripts/package.sh" --check > "$work/package.log" 2>&1; then
    declare -A P
    while read -r key value; do P[$key]=$value; done < "$work/package.txt"
    met() { awk -v v="$1" -v b="$2" 'BEGIN { print (v < b) ? "met" : "not met" }'; }
    {
      echo
      echo "## The package (\`scripts/package.sh\`, goals of issue 20)"
      echo
      echo "| goal | measured | |"
      echo "|---|---|---|"
      echo "| \`bash scripts/package.sh\` from a clean checkout < 5 min | ${P[build_seconds]} s | $(met "${P[build_seconds]}" 300) |"
      echo "| the .deb < 15 MB (15,000,000 bytes) | ${P[deb_bytes]} bytes, $(awk -v b="${P[deb_bytes]}" 'BEGIN { printf "%.2f", b / 1000000 }') MB | $(met "${P[deb_bytes]}" 15000000) |"
      echo "| \`octunnel --version\` in a clean bookworm root < 50 ms | ${P[version_ms]} ms (\`chroot ROOT /bin/true\`: ${P[true_ms]} ms) | $(met "${P[version_ms]}" 50) |"
      echo "| \`apt-get install ./octunnel_*.deb\`, then \`tunnel check\`, in a clean bookworm root exit 0 | yes, in ${P[check_seconds]} s | met |"
      echo
      echo "From a \`git clone\` of this commit (the release build and the man-page tool built from nothing); the"
      echo "Debian root $([ -n "${P[debootstrap_seconds]:-}" ] && echo "made by debootstrap in ${P[debootstrap_seconds]} s" || echo "from the cache (debootstrap not timed)");"
      echo "\`--version\`: the median of 31 runs through \`chroot\`, beside \`/bin/true\` run the same way. Load average at"
      echo "the start, after the build, at the end: ${P[load_start]//\// }; ${P[load_built]//\// }; ${P[load_end]//\// }."
    } >> docs/benchmarks.md
  else
    echo "package.sh --check failed; its log: $work/package.log" >&2
    tail -5 "$work/package.log" >&2
  fi
fi

# Asleep when nothing happens (issue 48): the wake-ups of an idle tunnel, ssh -N -L beside tunnel up
# without and with notifications (scripts/idle-wakeups.sh, IDLE_SECONDS each, default 60), a
# section of docs/benchmarks.md; BENCH_IDLE=0 skips it.
if [ "${BENCH_IDLE:-1}" != 0 ]; then
  if idle=$(OCT="$OCT" bash scripts/idle-wakeups.sh 2> "$work/idle.log"); then
    {
      echo
      echo "## Asleep when nothing happens (\`scripts/idle-wakeups.sh\`, issue 48)"
      echo
      echo "Context switches of every thread of each tunnel, idle for ${IDLE_SECONDS:-60} s once ready, through the same sshd to"
      echo "the OpenCode stand-in (1.x, a heartbeat every 10 s, the only thing that happens); goal: tunnel up with"
      echo "notifications at most 0.5 a second beyond the heartbeats."
      echo
      echo "$idle"
    } >> docs/benchmarks.md
  else
    echo "idle wake-ups: failed; $(tail -3 "$work/idle.log")" >&2
  fi
fi

# The phone push over the WAN (issue 54's goals): its own section of docs/benchmarks.md, written by
# scripts/lib/push-bench.sh (which also runs alone); BENCH_PUSH=0 skips it.
if [ "${BENCH_PUSH:-1}" != 0 ]; then
  OCT="$OCT" bash scripts/lib/push-bench.sh >> docs/benchmarks.md 2> "$work/push.log" ||
    echo "push: failed: $(tail -2 "$work/push.log")" >&2
fi

# Roaming (a move, and a sleep with a move) against ssh -L in a restart loop: its own section of
# docs/benchmarks.md, written by scripts/lib/roaming.sh (which also runs alone); BENCH_ROAM=0 skips it.
if [ "${BENCH_ROAM:-1}" != 0 ]; then
  OCT="$OCT" bash scripts/lib/roaming.sh >/dev/null || echo "roaming: failed (see above)" >&2
fi

# Issue 56's goals beside ssh -L over the WAN: its own section of docs/benchmarks.md (scripts/lib/issue56.sh).
[ "${BENCH_I56:-1}" != 0 ] && { OCT="$OCT" bash scripts/lib/issue56.sh >/dev/null || echo "issue 56: failed (see above)" >&2; }

# The port reclaim after a home reboot, directly and behind relays (issue 28): rows on stderr.
if [ "${BENCH_RECLAIM:-1}" != 0 ]; then
  OCT="$OCT" bash scripts/lib/reclaim.sh >&2 || echo "reclaim: failed (see above)" >&2
fi

# Bulk through tunnel up built on libssh2 1.11.1 (Debian 13's root) against ssh -L on the same
# sshd, on the cipher octunnel picks (issue 26): one row on stderr, docs/benchmarks.md's
# "Debian 13" section keeps it.
if [ "${BENCH_DEB13:-1}" != 0 ]; then
  BENCH_BULK_MB="$BULK_MB" bash scripts/lib/bulk-deb13.sh 2> "$work/bulk-deb13.log" | tee /dev/stderr > /dev/null ||
    { tail -5 "$work/bulk-deb13.log" >&2; echo "bulk on Debian 13: failed" >&2; }
fi
cat "$OUT"
