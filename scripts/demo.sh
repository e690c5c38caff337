#!/usr/bin/env bash
# The whole octunnel topology on this one machine, with real parts:
#   "VPS"  = a throwaway OpenSSH sshd on 127.0.0.1
#   "home" = the OpenCode stand-in, kept reachable by `octunnel home up` (the home side,
#            with its own key, restricted on the VPS to listening on the one port)
#   octunnel tunnel up: connect → trust → health ✓; then the agent asks for permission, the
#   laptop is told (with the command that answers), and `permission list` / `allow` answer it.
#   Ctrl-C stops everything.
# Installs what is missing (Debian), builds, and runs. DEMO_SECONDS=N stops it after N seconds.
# Which OpenCode plays "home": --flavour F or OPENCODE_FLAVOUR=F, one of opencode1 (default),
# opencode2.0.3, opencode2, other, nosse (see scripts/opencode-standin.py). The 2.x flavours make
# up a password, as `opencode serve` 2.x does; the demo hands it to octunnel with --password-file.
set -euo pipefail
cd "$(dirname "$0")/.."
flavour="${OPENCODE_FLAVOUR:-opencode1}"
while [ $# -gt 0 ]; do
  case "$1" in
    --flavour|--flavor) flavour="$2"; shift 2 ;;
    *) echo "usage: $0 [--flavour opencode1|opencode2.0.3|opencode2|other|nosse]" >&2; exit 64 ;;
  esac
done

. scripts/lib/packages.sh
. scripts/lib/sshd.sh
install_missing "${OCTUNNEL_PACKAGES[@]}"
. scripts/lib/scratch.sh
release_octunnel

scratch_dir demo 0


echo "== 1. your key (octunnel keygen)"
"$OCT" keygen --home "$work/laptop" --comment demo-laptop >/dev/null
echo "== 2. the \"VPS\": sshd on 127.0.0.1, authorizing your key for the tunnel only"
ssh_port=$(free_port); remote_port=$(free_port)
ssh-keygen -q -t ed25519 -N '' -f "$work/vps_hostkey"
"$OCT" keygen --home "$work/home" --comment demo-home >/dev/null
{ "$OCT" pubkey --home "$work/laptop" --restrict --remote-port "$remote_port"
  "$OCT" pubkey --home "$work/home" --restrict --listen --remote-port "$remote_port"; } > "$work/authorized_keys"
write_sshd_config "$work/sshd_config" "$ssh_port" 127.0.0.1 "$work/vps_hostkey" "$work/authorized_keys" "PidFile $work/sshd.pid"
/usr/sbin/sshd -D -f "$work/sshd_config" -E "$work/sshd.log" & pids+=($!)
wait_port "$ssh_port"
echo "== 3. \"home\": the OpenCode stand-in ($flavour)"
python3 scripts/opencode-standin.py --port 0 --quiet --flavour "$flavour" > "$work/standin.out" & pids+=($!)
for _ in $(seq 100); do grep -q LISTENING "$work/standin.out" 2>/dev/null && break; sleep 0.1; done
home_port=$(awk '/LISTENING/ {print $2}' "$work/standin.out")
password_args=()
if grep -q '^PASSWORD ' "$work/standin.out"; then
  # What `opencode serve` 2.x printed, kept in an owner-only file (never on the command line).
  (umask 077; awk '/^PASSWORD / {print $2}' "$work/standin.out" > "$work/opencode-password")
  password_args=(--password-file "$work/opencode-password")
  echo "   it made up a password, as opencode serve 2.x does; octunnel reads it from $work/opencode-password"
fi
target="$(id -un)@127.0.0.1:$ssh_port"
echo "== 4. the home machine's side, as \`tunnel reverse-command --format home\` prints it:"
reverse=$("$OCT" tunnel reverse-command --home "$work/laptop" "$target" --remote-port "$remote_port" --home-port "$home_port" --format home)
echo "   $reverse"
# The home machine has its own octunnel directory (key, known_hosts); the command is otherwise
# unchanged but for --no-notify: home up would tell the agent's moments too (it follows OpenCode
# itself), on this same terminal; here the laptop's are the ones shown.
read -ra words <<< "$reverse"
"$OCT" "${words[@]:1}" --home "$work/home" --no-notify ${password_args[@]+"${password_args[@]}"} &
pids+=($!)
wait_port "$remote_port" || { echo "the reverse tunnel did not come up"; exit 1; }
# The headline: the agent asks, the laptop is told with the command that answers, and answers.
ask_and_answer() {
  for _ in $(seq 300); do
    "$OCT" tunnel status --home "$work/laptop" --json 2>/dev/null | grep -Eq '"permissionsWaiting" *: *[0-9]' && break
    sleep 0.1
  done
  echo "== 6. the agent asks for permission (at home: bash: git push)"
  curl -s -m 5 -H 'Content-Type: application/json' -X POST "http://127.0.0.1:$home_port/standin/permission" \
    -d '{"sessionID":"ses_demo","permission":"bash","patterns":["git push"],"title":"Fix the login bug"}' >/dev/null
  local id=""
  for _ in $(seq 100); do
    id=$("$OCT" permission list --home "$work/laptop" ${password_args[@]+"${password_args[@]}"} 2>/dev/null | awk 'NR==1 {print $1}')
    [ -n "$id" ] && break
    sleep 0.1
  done
  echo "== 7. octunnel permission list, then octunnel permission allow $id"
  "$OCT" permission list --home "$work/laptop" ${password_args[@]+"${password_args[@]}"}
  "$OCT" permission allow "$id" --home "$work/laptop" ${password_args[@]+"${password_args[@]}"}
}

echo "== 5. octunnel tunnel up (Ctrl-C to stop everything)"
local_port=$(free_port)
args=(tunnel up --home "$work/laptop" "$target" --remote-port "$remote_port" --home-port "$home_port" --local-port "$local_port"
      ${password_args[@]+"${password_args[@]}"})
"$OCT" "${args[@]}" & up=$!; pids+=($up)
case "$flavour" in other|nosse) ;; *) ask_and_answer ;; esac
if [ -n "${DEMO_SECONDS:-}" ]; then
  sleep "$DEMO_SECONDS"
  case "$flavour" in opencode2.0.3) path=/api/health ;; opencode2) path=/api/info ;; *) path=/global/health ;; esac
  echo "== a client through the tunnel: curl http://127.0.0.1:$local_port$path"
  auth=(); [ -f "$work/opencode-password" ] && auth=(-u "opencode:$(cat "$work/opencode-password")")
  curl -s -m 5 ${auth[@]+"${auth[@]}"} "http://127.0.0.1:$local_port$path" 2>/dev/null || echo "(curl failed)"
  echo
  kill -INT "$up"; wait "$up"
else
  wait "$up"
fi
