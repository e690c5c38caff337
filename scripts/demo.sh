#!/usr/bin/env bash
# The whole octunnel topology on this one machine, with real parts:
#   "VPS"  = a throwaway OpenSSH sshd on 127.0.0.1
#   "home" = the OpenCode stand-in, kept reachable by a real `ssh -N -R` reverse tunnel
#            built from octunnel's own printed command
#   octunnel tunnel up in the foreground: connect → trust → health ✓.  Ctrl-C stops everything.
# Installs what is missing (Debian), builds, and runs. DEMO_SECONDS=N stops it after N seconds.
set -euo pipefail
cd "$(dirname "$0")/.."

. scripts/lib/packages.sh
. scripts/lib/sshd.sh
install_missing "${OCTUNNEL_PACKAGES[@]}"
swift build -c release --product octunnel 2>&1 | tail -1
OCT="$(swift build -c release --show-bin-path)/octunnel"

work=$(mktemp -d /tmp/octunnel-demo.XXXXXX)
pids=()
cleanup() {
  trap - EXIT INT TERM
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 0' INT TERM

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
wait_port() { for _ in $(seq 100); do (echo >/dev/tcp/127.0.0.1/"$1") 2>/dev/null && return 0; sleep 0.1; done; return 1; }

echo "== 1. your key (octunnel keygen)"
"$OCT" keygen --home "$work/laptop" --comment demo-laptop >/dev/null
echo "== 2. the \"VPS\": sshd on 127.0.0.1, authorizing your key for the tunnel only"
ssh_port=$(free_port); remote_port=$(free_port)
ssh-keygen -q -t ed25519 -N '' -f "$work/vps_hostkey"
ssh-keygen -q -t ed25519 -N '' -C demo-home -f "$work/home_key"
{ "$OCT" pubkey --home "$work/laptop" --restrict --remote-port "$remote_port"; cat "$work/home_key.pub"; } > "$work/authorized_keys"
write_sshd_config "$work/sshd_config" "$ssh_port" 127.0.0.1 "$work/vps_hostkey" "$work/authorized_keys" "PidFile $work/sshd.pid"
/usr/sbin/sshd -D -f "$work/sshd_config" -E "$work/sshd.log" & pids+=($!)
wait_port "$ssh_port"
echo "== 3. \"home\": the OpenCode stand-in"
python3 scripts/opencode-standin.py --port 0 --quiet > "$work/standin.out" & pids+=($!)
for _ in $(seq 100); do grep -q LISTENING "$work/standin.out" 2>/dev/null && break; sleep 0.1; done
home_port=$(awk '/LISTENING/ {print $2}' "$work/standin.out")
target="$(id -un)@127.0.0.1:$ssh_port"
echo "== 4. the home machine's reverse tunnel, exactly as octunnel prints it:"
reverse=$("$OCT" tunnel reverse-command --home "$work/laptop" "$target" --remote-port "$remote_port" --home-port "$home_port")
echo "   $reverse"
# The home side uses its own key and known_hosts; the command itself is unchanged.
read -ra words <<< "$reverse"
ssh -i "$work/home_key" -o UserKnownHostsFile="$work/home_known_hosts" -o StrictHostKeyChecking=accept-new \
    -o BatchMode=yes -o LogLevel=ERROR "${words[@]:1}" &
pids+=($!)
wait_port "$remote_port" || { echo "the reverse tunnel did not come up"; exit 1; }
echo "== 5. octunnel tunnel up (Ctrl-C to stop everything)"
local_port=$(free_port)
args=(tunnel up --home "$work/laptop" "$target" --remote-port "$remote_port" --home-port "$home_port" --local-port "$local_port")
if [ -n "${DEMO_SECONDS:-}" ]; then
  "$OCT" "${args[@]}" & up=$!; pids+=($up)
  sleep "$DEMO_SECONDS"
  echo "== a client through the tunnel: curl http://127.0.0.1:$local_port/global/health"
  curl -s -m 5 "http://127.0.0.1:$local_port/global/health" 2>/dev/null || python3 -c "import urllib.request;print(urllib.request.urlopen('http://127.0.0.1:$local_port/global/health').read().decode())"
  echo
  kill -INT "$up"; wait "$up"
else
  "$OCT" "${args[@]}"
fi
