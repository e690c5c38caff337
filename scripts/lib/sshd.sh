# Sourced by the scripts: a throwaway sshd's config, the same for demo and bench.
# write_sshd_config FILE PORT ADDRESS HOSTKEY AUTHORIZED_KEYS [LINE...]
# Key-only login (root allowed), TCP forwarding on, no PAM; each LINE is appended as is
# (sshd keeps the first value it reads for a keyword, so a LINE cannot override these).
write_sshd_config() {
  local file=$1 port=$2 address=$3 hostkey=$4 authorized=$5
  shift 5
  {
    printf '%s\n' "Port $port" "ListenAddress $address" "HostKey $hostkey" "AuthorizedKeysFile $authorized" \
      "PasswordAuthentication no" "KbdInteractiveAuthentication no" "UsePAM no" "StrictModes no" \
      "AllowTcpForwarding yes" "PermitRootLogin yes"
    [ $# -eq 0 ] || printf '%s\n' "$@"
  } > "$file"
  mkdir -p /run/sshd 2>/dev/null || true   # the privilege-separation directory
}

# stop_started PID...: stops processes a script started, and every process below them. sshd's
# per-connection children run in sessions of their own (setsid) and outlive sshd when their
# client's link died without a FIN (a move, a cut): they are found by parent PID while sshd
# still is their parent, and stopped with it. A stopped (SIGSTOP) process is woken so that it
# can exit. Signals are sent as $as_root when the script sets it (package.sh, not root).
stop_started() {
  local pid all=()
  for pid in "$@"; do all+=("$pid" $(descendants_of "$pid")); done
  [ ${#all[@]} -gt 0 ] || return 0
  ${as_root:-} kill -CONT "${all[@]}" 2>/dev/null || true
  ${as_root:-} kill "${all[@]}" 2>/dev/null || true
}

# descendants_of PID: the PIDs below PID, children first.
descendants_of() {
  local child
  for child in $(pgrep -P "$1"); do echo "$child"; descendants_of "$child"; done
}

# free_port: a TCP port free on 127.0.0.1 now. wait_port PORT: until something listens there (10 s).
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
wait_port() { for _ in $(seq 200); do (echo >/dev/tcp/127.0.0.1/"$1") 2>/dev/null && return 0; sleep 0.05; done; return 1; }

# start_octunnel_vps WORK [LINE...]: octunnel's key in WORK/home (made with "$OCT"), a host key, an
# sshd on a free port of 127.0.0.1 that authorizes that key, each LINE added to its config, started
# and listening; sets ssh_port and adds sshd's PID to the caller's pids array
# (stop_started "${pids[@]}" stops it).
start_octunnel_vps() {
  local work=$1
  shift
  ssh_port=$(free_port)
  "$OCT" keygen --home "$work/home" >/dev/null 2>&1
  ssh-keygen -q -t ed25519 -N '' -f "$work/hostkey"
  "$OCT" pubkey --home "$work/home" > "$work/authorized_keys"
  write_sshd_config "$work/sshd_config" "$ssh_port" 127.0.0.1 "$work/hostkey" "$work/authorized_keys" "$@" "PidFile $work/sshd.pid"
  /usr/sbin/sshd -D -f "$work/sshd_config" -E "$work/sshd.log" & pids+=($!)
  wait_port "$ssh_port"
}
