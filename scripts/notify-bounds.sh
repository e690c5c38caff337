#!/usr/bin/env bash
# What a hostile home costs `tunnel up`'s notifications (issue 48, point 3), measured as the issue
# found it: through sshd to the OpenCode stand-in (2.x, with a password), `tunnel up` following its
# events, then (1) FLOOD (default 3000) permission.asked with distinct ids and a --notify-command
# that takes 5 s: the most children of tunnel up at once, its threads at most, its RSS growth, and
# whether a GET through the tunnel is answered meanwhile; (2) 400 session.updated with 900 KB
# titles: RSS growth; (3) SESSIONS (default 20,000) tiny sessions (updated, busy): CPU seconds.
# OCT: the octunnel binary (default: this tree's debug build). Prints one line per measure.
# Not part of the test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib/packages.sh
. scripts/lib/sshd.sh
. scripts/lib/scratch.sh
OCT=${OCT:-$(swift build --show-bin-path)/octunnel}
FLOOD=${FLOOD:-3000}
SESSIONS=${SESSIONS:-20000}
TITLES=${TITLES:-400}
scratch_dir notify-bounds
password="pw-$RANDOM$RANDOM"

python3 scripts/opencode-standin.py --port 0 --flavor opencode2 --password "$password" --quiet > "$work/standin.out" 2>&1 & pids+=($!)
for _ in $(seq 200); do grep -q '^LISTENING' "$work/standin.out" 2>/dev/null && break; sleep 0.05; done
backend=$(awk '/^LISTENING/ {print $2}' "$work/standin.out")
start_octunnel_vps "$work"

printf '#!/bin/sh\nsleep 5\n' > "$work/slow.sh"; chmod +x "$work/slow.sh"
port=$(free_port)
OPENCODE_PASSWORD=$password "$OCT" tunnel up --home "$work/home" "$(id -un)@127.0.0.1:$ssh_port" --local-port "$port" --remote-port "$backend" \
  --no-pair-port --notify-command "$work/slow.sh" --notify-timeout 10 2>"$work/up.log" & up=$!; pids+=($up)
for _ in $(seq 400); do grep -q "notifications: following" "$work/up.log" 2>/dev/null && break; sleep 0.05; done
grep -q "notifications: following" "$work/up.log" || { echo "notify-bounds: tunnel up did not follow: $(tail -3 "$work/up.log")" >&2; exit 1; }

rss() { awk '/VmRSS/ {print $2}' "/proc/$up/status"; }
threads() { awk '/Threads/ {print $2}' "/proc/$up/status"; }
cpu() { awk '{print $14 + $15}' "/proc/$up/stat"; }
children() { { pgrep -P "$up" || true; } | wc -l; }
# emit KIND COUNT: POSTs COUNT events of KIND to the stand-in, one connection.
emit() {
  python3 - "$backend" "$1" "$2" <<'PY'
import http.client, json, sys
port, kind, count = int(sys.argv[1]), sys.argv[2], int(sys.argv[3])
big = "t" * 900_000
conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
def post(event):
    global conn
    body = json.dumps(event)
    for attempt in (1, 2):
        try:
            conn.request("POST", "/standin/emit", body, {"Content-Type": "application/json"})
            conn.getresponse().read()
            return
        except (http.client.HTTPException, OSError):
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
batch = []
def event(i):
    if kind == "flood":
        return {"type": "permission.asked", "fields": {"sessionID": "s1", "id": f"per_{i}", "permission": "bash", "patterns": [f"make {i}"]}}
    if kind == "titles":
        return {"type": "session.updated", "fields": {"sessionID": f"big{i}", "info": {"id": f"big{i}", "title": big + str(i)}}}
    return [{"type": "session.updated", "fields": {"sessionID": f"m{i}", "info": {"id": f"m{i}", "title": f"session {i}"}}},
            {"type": "session.status", "fields": {"sessionID": f"m{i}", "status": {"type": "busy"}}}]
# Big titles one a POST; the rest 100 events a POST (a JSON array: the stand-in sends them in order).
size = 1 if kind == "titles" else 100
for i in range(count):
    one = event(i)
    batch += one if isinstance(one, list) else [one]
    if len(batch) >= size:
        post(batch)
        batch = []
if batch:
    post(batch)
PY
}

# drained NAME: waits until tunnel up has read everything sent before (a failure of session NAME, sent
# last, told on stderr): each measure counts only its own events.
drained() {
  curl -s -o /dev/null -d "{\"type\":\"session.error\",\"fields\":{\"sessionID\":\"$1\",\"error\":{\"name\":\"Marker\"}}}" \
    "http://127.0.0.1:$backend/standin/emit"
  for _ in $(seq 1200); do grep -q "failed: $1" "$work/up.log" && return 0; sleep 0.1; done
  echo "notify-bounds: tunnel up did not read up to $1" >&2; return 1
}

rss0=$(rss); most=0; threads_most=0; served=0; asked=0
emit flood "$FLOOD" & emitter=$!
while kill -0 "$emitter" 2>/dev/null || [ "$(children)" -gt 0 ]; do
  c=$(children); if [ "$c" -gt "$most" ]; then most=$c; fi
  t=$(threads); if [ "$t" -gt "$threads_most" ]; then threads_most=$t; fi
  asked=$((asked + 1)); if curl -s -m 5 -o /dev/null "http://127.0.0.1:$port/"; then served=$((served + 1)); fi
  sleep 0.2
done
echo "flood: $FLOOD permission.asked, a 5 s command: children at once at most $most; threads at most $threads_most; RSS ${rss0} → $(rss) KiB; GETs through the tunnel answered $served of $asked"
echo "flood: told $(grep -c '^notify: ' "$work/up.log") times on stderr, of which merged notices $(grep -c 'more permissions asked' "$work/up.log")"

drained after-flood
rss0=$(rss)
emit titles "$TITLES"
drained after-titles
echo "titles: $TITLES session.updated with 900 KB titles: RSS ${rss0} → $(rss) KiB"

cpu0=$(cpu)
emit many "$SESSIONS"
drained after-sessions
echo "sessions: $SESSIONS sessions (updated + busy): tunnel up's CPU $(awk -v a="$cpu0" -v b="$(cpu)" -v hz="$(getconf CLK_TCK)" 'BEGIN {printf "%.2f", (b - a) / hz}') s"
echo "tunnel up alive: $(kill -0 "$up" 2>/dev/null && echo yes || echo no)"
