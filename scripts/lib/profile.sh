# Sourced by bench.sh: where a tunnel process spends its CPU (perf) and how many system calls
# it makes per forwarded request (strace), measured in the same run as the figures they explain.

# perf_available: true when perf can sample a process here (some kernels or containers refuse).
perf_available() {
  command -v perf >/dev/null 2>&1 && perf stat -e task-clock true >/dev/null 2>&1
}

# cpu_shares PID OUT -- COMMAND...: samples PID while COMMAND runs and prints one line,
# "PROGRAM A% · libssh2 B% · libcrypto C% · libc D% · Swift runtime E% · kernel F%",
# the share of PID's CPU samples in each binary (PROGRAM: its own executable).
cpu_shares() {
  local pid=$1 out=$2; shift 3
  perf record -q -F 999 -p "$pid" -o "$out" >/dev/null 2>&1 &
  local rec=$!
  sleep 0.3
  "$@" >/dev/null 2>&1 || true
  kill -INT "$rec" 2>/dev/null; wait "$rec" 2>/dev/null || true
  local own; own=$(cat "/proc/$pid/comm")
  perf report -i "$out" --no-children --sort dso --stdio 2>/dev/null | awk -v program="$own" '
    /%/ { share = $1 + 0; dso = $2
          if (dso == program) own += share
          else if (dso ~ /^libssh2/) ssh2 += share
          else if (dso ~ /^libcrypto/) crypto += share
          else if (dso ~ /^libc\.so/) libc += share
          else if (dso ~ /^libswift|^libFoundation|^libdispatch/) swift += share
          else if (dso ~ /kernel/) kernel += share
          else other += share }
    END { printf "%s %.1f%% · libssh2 %.1f%% · libcrypto %.1f%% · libc %.1f%% · Swift runtime %.1f%% · kernel %.1f%%\n",
                 program, own, ssh2, crypto, libc, swift, kernel }'
}

# syscalls_per_request PID PORT CONNS SECONDS: runs wrk against PORT while strace counts PID's
# system calls; prints "N.N (sendto A, recvfrom B, poll C …)" per completed request.
syscalls_per_request() {
  local pid=$1 port=$2 conns=$3 secs=$4 out
  out=$(mktemp)
  strace -c -f -p "$pid" -o "$out" >/dev/null 2>&1 &
  local tracer=$!
  sleep 0.3
  local requests
  requests=$(wrk -t2 -c"$conns" -d"${secs}s" "http://127.0.0.1:$port/global/health" | awk '/requests in/ {print $1}')
  kill -INT "$tracer" 2>/dev/null; wait "$tracer" 2>/dev/null || true
  awk -v n="$requests" '
    $NF ~ /^[a-z_0-9]+$/ && $4 ~ /^[0-9]+$/ && $NF != "total" {
      total += $4
      if ($4 / n >= 0.05) { detail = detail sprintf("%s%s %.2f", sep, $NF, $4 / n); sep = ", " } }
    END { if (n > 0) printf "%.2f (%s)\n", total / n, detail; else print "n/a" }' "$out"
  rm -f "$out"
}
