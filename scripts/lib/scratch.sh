# What demo.sh, soak.sh, bench.sh and bench-rekey.sh share: octunnel's release binary, and a
# scratch directory whose processes and namespaces go with it on exit. Needs sshd.sh (stop_started).

# OCT: the binary $OCT names, else a release build's (built now; its last line on stderr).
release_octunnel() {
  if [ -z "${OCT:-}" ]; then
    swift build -c release --product octunnel 2>&1 | tail -1 >&2
    OCT="$(swift build -c release --show-bin-path)/octunnel"
  fi
}

# work: a new /tmp/octunnel-NAME.XXXXXX. The script appends what it starts to pids and the
# network namespaces it makes to namespaces; on exit the processes are stopped (by their PIDs,
# sshd's children with them), then the namespaces deleted, then the directory removed.
# INT and TERM exit with status $2 (130 unless given).
scratch_dir() {
  work=$(mktemp -d "/tmp/octunnel-$1.XXXXXX")
  pids=()
  namespaces=()
  trap scratch_cleanup EXIT
  trap "exit ${2:-130}" INT TERM
}

scratch_cleanup() {
  trap - EXIT INT TERM
  stop_started "${pids[@]}"
  wait 2>/dev/null || true
  for ns in "${namespaces[@]}"; do ip netns delete "$ns" 2>/dev/null || true; done
  rm -rf "$work"
}

# wait_line FILE TEXT: polls (up to 20 s) until FILE holds TEXT.
wait_line() { for _ in $(seq 400); do grep -q "$2" "$1" 2>/dev/null && return 0; sleep 0.05; done; return 1; }
