#!/usr/bin/env bash
# Roaming: octunnel `tunnel up` (its defaults) against `ssh -N -L` kept up by a restart loop
# with ServerAliveInterval 15 / ServerAliveCountMax 3 (what autossh users run), in the same
# run: a laptop namespace with two links to a VPS namespace (sshd, a web server), and
#   1. a move: the laptop's address on the link the sessions use is deleted, the other link
#      routes to the VPS instead;
#   2. a sleep with a move: both tunnels stopped (SIGSTOP), moved back, woken (SIGCONT)
#      BENCH_ROAM_SLEEP seconds later (default 20);
#   3. octunnel alone: a move as a planned reconnect's new session connects (`tunnel reconnect`, then
#      the move as soon as its attempt starts).
# Each row is the time from the move (or the wake) until a request through that tunnel is
# answered again (curl every 0.1 s, 1 s per try). Root only. Run alone
# (`bash scripts/lib/roaming.sh`; OCT=path/to/octunnel to skip the release build) or from
# scripts/bench.sh; either way it writes the "Roaming" section of docs/benchmarks.md.
. "$(dirname "$0")/bench-prelude.sh"
. scripts/lib/roaming-links.sh
SLEEP=${BENCH_ROAM_SLEEP:-20}
LIMIT=${BENCH_ROAM_LIMIT:-150}   # seconds a tunnel may take before the row says "> LIMIT"
release_octunnel
[ "$(id -u)" -eq 0 ] || { echo "roaming: skipped (not root: network namespaces need CAP_SYS_ADMIN and CAP_NET_ADMIN)" >&2; exit 0; }

scratch_dir roam
L="octroam-$$-$RANDOM-l"; V="${L%-l}-v"
namespaces=("$L" "$V")
ms_now() { date +%s%3N; }
inL() { ip netns exec "$L" "$@"; }

# Two namespaces, two links: a (the sessions' first path) and b.
roam_links "$L" "$V"

# The VPS: a web server with the health answer, and sshd on its first-link address.
mkdir -p "$work/www/global"
echo '{"healthy":true,"version":"1.0.0"}' > "$work/www/global/health"
web_port=8080
ip netns exec "$V" python3 -m http.server "$web_port" --bind 127.0.0.1 --directory "$work/www" >/dev/null 2>&1 & pids+=($!)
roam_vps "$V" "$work" 22
user=$(id -un)

# The laptop: octunnel with its defaults, and ssh -L in a restart loop.
oct_port=4096; ssh_port=4097
ip netns exec "$L" "$OCT" tunnel up --home "$work/home" "$user@$vps" --local-port "$oct_port" --remote-port "$web_port" --no-health \
  2>"$work/octunnel.log" & oct_pid=$!; pids+=($oct_pid)
ready() { for _ in $(seq 300); do inL curl -sf -m 1 -o /dev/null "http://127.0.0.1:$1/global/health" && return 0; sleep 0.1; done; return 1; }
ready "$oct_port"   # octunnel has written known_hosts, which ssh then reads
ip netns exec "$L" bash -c 'while true; do
  ssh -N -i "$1/id_ed25519" -o UserKnownHostsFile="$1/known_hosts" -o BatchMode=yes -o ExitOnForwardFailure=yes \
      -o ServerAliveInterval=15 -o ServerAliveCountMax=3 -o ConnectTimeout=10 -L "127.0.0.1:$2:127.0.0.1:$3" "$4"
  sleep 1
done' _ "$work/home" "$ssh_port" "$web_port" "$user@$vps" 2>"$work/ssh.log" & loop_pid=$!; pids+=($loop_pid)

# served PORT START_MS → ms from START_MS until a request through PORT is answered (or the limit).
served() {
  inL bash -c 'start=$2; limit=$3
    while true; do
      curl -sf -m 1 -o /dev/null "http://127.0.0.1:$1/global/health" && { echo $(( $(date +%s%3N) - start )); exit 0; }
      [ $(( $(date +%s%3N) - start )) -gt $(( limit * 1000 )) ] && { echo "> ${limit}000"; exit 0; }
      sleep 0.1
    done' _ "$1" "$2" "$LIMIT"
}
ready "$ssh_port"
tree() { echo "$1"; local child; for child in $(pgrep -P "$1"); do tree "$child"; done; }   # a pid and its descendants
seconds() { case "$1" in ">"*) echo "> $LIMIT s";; *) awk -v ms="$1" 'BEGIN {printf "%.1f s", ms / 1000}';; esac; }

# 1. The move: link a's laptop address vanishes, link b carries the VPS's address.
echo "roaming: the move" >&2
t0=$(ms_now)
ip -n "$L" addr del "$a.1/30" dev rma
ip -n "$L" route add "$vps/32" via "$b.2" dev rmb
served "$oct_port" "$t0" > "$work/oct1" & p1=$!
served "$ssh_port" "$t0" > "$work/ssh1" & p2=$!
wait "$p1" "$p2"
move_oct=$(cat "$work/oct1"); move_ssh=$(cat "$work/ssh1")

# 2. Asleep, moved back while asleep, woken SLEEP s later.
echo "roaming: asleep for $SLEEP s, moved back while asleep" >&2
stopped=($(tree "$oct_pid") $(tree "$loop_pid"))
kill -STOP "${stopped[@]}"
for pid in "$oct_pid" $(pgrep -x ssh -P "$loop_pid"); do
  [ "$(ps -o stat= -p "$pid" | cut -c1)" = T ] || { echo "roaming: pid $pid ($(ps -o comm= -p "$pid")) did not stop" >&2; exit 1; }
done
ip -n "$L" addr add "$a.1/30" dev rma
ip -n "$L" route del "$vps/32" via "$b.2" dev rmb
ip -n "$L" addr del "$b.1/30" dev rmb
sleep "$SLEEP"
t0=$(ms_now)
kill -CONT "${stopped[@]}"
served "$oct_port" "$t0" > "$work/oct2" & p1=$!
served "$ssh_port" "$t0" > "$work/ssh2" & p2=$!
wait "$p1" "$p2"
sleep_oct=$(cat "$work/oct2"); sleep_ssh=$(cat "$work/ssh2")
reconnects=$("$OCT" tunnel status --home "$work/home" --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["reconnects"])')

# 3. A move as a planned reconnect's new session connects (make before break meets a move): `tunnel reconnect`,
# and the move as soon as its attempt starts (its "connecting to" line). octunnel only: ssh -L plans no reconnect.
echo "roaming: a move as a planned reconnect's new session connects" >&2
attempts=$(grep -c '^connecting to' "$work/octunnel.log" || true)
"$OCT" tunnel reconnect --home "$work/home" >/dev/null 2>&1 & pids+=($!)
for _ in $(seq 1000); do [ "$(grep -c '^connecting to' "$work/octunnel.log")" -gt "$attempts" ] && break; sleep 0.01; done
t0=$(ms_now)
roam_move "$L" 0
collide_oct=$(served "$oct_port" "$t0")

section="$work/section.md"
{
  echo "## Roaming (\`scripts/lib/roaming.sh\`, $(date -u '+%Y-%m-%d %H:%M UTC'), octunnel $("$OCT" --version))"
  echo
  echo "A laptop namespace with two links to a VPS namespace (sshd, a web server); octunnel \`tunnel up\` with its defaults"
  echo "(keepalive 15 s) beside \`ssh -N -L\` in a restart loop (\`ServerAliveInterval 15\`, \`ServerAliveCountMax 3\`, 1 s between"
  echo "runs), both started before the events. Time until a request through each is answered again (curl every 0.1 s,"
  echo "1 s a try). Load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)."
  echo
  echo "| event | octunnel: served again after | ssh -L + restart loop |"
  echo "|---|---|---|"
  echo "| a move (the sessions' address deleted, the other link routed) | $(seconds "$move_oct") | $(seconds "$move_ssh") |"
  echo "| asleep (SIGSTOP), moved back while asleep, woken (SIGCONT) $SLEEP s later: after waking | $(seconds "$sleep_oct") | $(seconds "$sleep_ssh") |"
  echo "| a move as a planned reconnect's new session connects (\`tunnel reconnect\`, the move at its \`connecting to\` line) |" \
    "$(seconds "$collide_oct") | (no planned reconnect) |"
  echo
  echo "octunnel reconnected $reconnects times in the first two events (one per event). It hears the kernel's address and route changes"
  echo "(rtnetlink), sees the session's own address gone and reconnects at once (docs/architecture.md, \"Reconnecting\");"
  echo "ssh -L notices only when three keepalives go unanswered, and its loop then starts a new ssh."
} > "$section"
cat "$section"

# Replace the section in docs/benchmarks.md (or append it), leaving the rest as bench.sh wrote it.
python3 scripts/lib/replace-section.py "$section" docs/benchmarks.md "## Roaming ("
