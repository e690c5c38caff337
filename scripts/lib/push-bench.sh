#!/usr/bin/env bash
# The phone push over the WAN (issue 54's goals): a permission asked at home is on the ntfy server
# <= 0.5 s later; a tap on the phone reaches OpenCode <= 1 s after it; idle with the push on, home up
# wakes <= 0.5 times a second. Three places, each link delayed BENCH_WAN_DELAY_MS (default 20) each
# way by scripts/lib/delay-relay.py (this kernel has no netem; the relay holds every chunk, not
# TCP's handshake and ACKs):
#   home:  `home up --push` (this tree's release build, or OCT) following the OpenCode stand-in
#          (BENCH_PUSH_FLAVOR, default opencode1) on this machine;
#   VPS:   sshd (home up's reverse tunnel) and a real ntfy (Debian 13's 2.11, from the Debian 13
#          root scripts/test.sh builds, run through that root's own loader), home reaching both
#          through its own delayed link;
#   phone: a scripted phone (scripts/lib/push-probe.py) reaching ntfy through a delayed link of its
#          own, performing each button as ntfy's app does.
# BENCH_PUSH_SAMPLES (default 12) permissions, 4 s apart (the notifier's burst budget lets 8 a kind
# through at once and one more every 4 s: faster, the rows would time the budget); then home up idle
# for IDLE_SECONDS (default 60). Prints a section of docs/benchmarks.md on stdout (scripts/bench.sh appends it); run alone:
# `bash scripts/lib/push-bench.sh` (OCT=path/to/octunnel skips the release build).
set -euo pipefail
cd "$(dirname "$0")/../.."
. scripts/lib/sshd.sh
. scripts/lib/scratch.sh
DELAY=${BENCH_WAN_DELAY_MS:-20}
SAMPLES=${BENCH_PUSH_SAMPLES:-12}
GAP=${BENCH_PUSH_GAP:-4}
IDLE=${IDLE_SECONDS:-60}
FLAVOR=${BENCH_PUSH_FLAVOR:-opencode1}
release_octunnel
root=${OCTUNNEL_NTFY_ROOT:-$(ls -d "$HOME"/.cache/octunnel/trixie-build-* 2>/dev/null | head -1)}
[ -x "$root/usr/bin/ntfy" ] ||
  { echo "push bench: no Debian 13 root with ntfy (run scripts/test.sh once, or set OCTUNNEL_NTFY_ROOT)" >&2; exit 1; }
scratch_dir push-bench

# relay PORT TARGET_PORT: a delayed link from 127.0.0.1:PORT to 127.0.0.1:TARGET_PORT.
relay() {
  python3 scripts/lib/delay-relay.py 127.0.0.1 "$1" 127.0.0.1 "$2" "$DELAY" > "$work/relay-$1.out" 2>&1 & pids+=($!)
  wait_line "$work/relay-$1.out" LISTENING
}

# The VPS: sshd authorizing octunnel's key, and ntfy.
start_octunnel_vps "$work"
ntfy=$(free_port)
printf '%s\n' "base-url: \"http://127.0.0.1:$ntfy\"" "listen-http: \"127.0.0.1:$ntfy\"" "cache-file: \"$work/ntfy-cache.db\"" \
  "visitor-request-limit-exempt-hosts: \"127.0.0.1\"" > "$work/ntfy.yml"
"$root/lib64/ld-linux-x86-64.so.2" --library-path "$root/lib/x86_64-linux-gnu:$root/usr/lib/x86_64-linux-gnu" "$root/usr/bin/ntfy" \
  serve --config "$work/ntfy.yml" 2> "$work/ntfy.log" & pids+=($!)
wait_port "$ntfy" || { echo "push bench: ntfy did not start: $(tail -2 "$work/ntfy.log")" >&2; exit 1; }

# The links: home -> sshd, home -> ntfy, phone -> ntfy.
home_ssh=$(free_port); relay "$home_ssh" "$ssh_port"
home_ntfy=$(free_port); relay "$home_ntfy" "$ntfy"
phone_ntfy=$(free_port); relay "$phone_ntfy" "$ntfy"

# Home: the stand-in and home up pushing to a topic of its own.
python3 scripts/opencode-standin.py --port 0 --flavor "$FLAVOR" --quiet > "$work/standin.out" 2>&1 & pids+=($!)
wait_line "$work/standin.out" '^LISTENING'
standin=$(awk '/^LISTENING/ {print $2}' "$work/standin.out")
topic="oc-bench-$RANDOM$RANDOM"
env -u OPENCODE_PASSWORD -u OPENCODE_SERVER_PASSWORD "$OCT" home up --home "$work/home" "$(id -un)@127.0.0.1:$home_ssh" \
  --remote-port "$(free_port)" --home-port "$standin" --push "http://127.0.0.1:$home_ntfy/$topic" --push-detail full \
  2> "$work/home-up.log" & home_pid=$!; pids+=($home_pid)
wait_line "$work/home-up.log" "notifications: following" ||
  { echo "push bench: home up did not follow OpenCode: $(tail -3 "$work/home-up.log")" >&2; exit 1; }

python3 scripts/lib/push-probe.py "$ntfy" "$phone_ntfy" "$topic" "$standin" "$SAMPLES" "$GAP" > "$work/probe.out" 2> "$work/probe.err" ||
  { echo "push bench: the probe failed: $(tail -2 "$work/probe.err") / home up: $(tail -3 "$work/home-up.log")" >&2; exit 1; }

# switches: voluntary + involuntary context switches of every thread of home up so far.
switches() { cat /proc/"$home_pid"/task/*/status 2>/dev/null | awk '/ctxt_switches/ {n += $2} END {print n + 0}'; }
sleep 3
before=$(switches); sleep "$IDLE"; after=$(switches)

stat() { # WORD → "median max" of the probe's WORD lines
  awk -v w="$1" '$1 == w {print $2}' "$work/probe.out" | sort -n | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)], v[NR]}'
}
read -r asked_med asked_max <<< "$(stat asked)"
read -r tap_med tap_max <<< "$(stat tap)"
pushes=$(awk '$1 == "pushes" {print $2}' "$work/probe.out")
answers=$(curl -sf "http://127.0.0.1:$standin/standin/replies" | python3 -c 'import json, sys; print(len(json.load(sys.stdin)["replies"]))')
rate=$(awk -v d=$((after - before)) -v s="$IDLE" 'BEGIN { printf "%.2f", d / s }')
met() { awk -v v="$1" -v b="$2" 'BEGIN { print (v <= b) ? "met" : "not met" }'; }
echo
echo "## The phone push over the WAN (\`scripts/lib/push-bench.sh\`, issue 54)"
echo
echo "| goal | median | max | |"
echo "|---|---|---|---|"
echo "| a permission asked at home is on the ntfy server ≤ 0.5 s later | $asked_med ms | $asked_max ms | $(met "$asked_max" 500) |"
echo "| a tap on the phone reaches OpenCode ≤ 1 s after it | $tap_med ms | $tap_max ms | $(met "$tap_max" 1000) |"
echo "| idle with the push on: home up's wake-ups ≤ 0.5 a second | $rate /s over $IDLE s ($((after - before)) switches) |" \
  "| $(met "$rate" 0.5) |"
echo
echo "$SAMPLES permissions asked on the OpenCode stand-in ($FLAVOR) $GAP s apart, each pushed once with its buttons ($pushes pushes"
echo "with buttons seen, $answers answers recorded at OpenCode). Home (home up --push, the stand-in), the VPS (sshd, Debian 13's"
echo "ntfy 2.11) and the phone (scripts/lib/push-probe.py) apart: home reaches sshd and ntfy, and the phone reaches ntfy, each"
echo "through a relay holding every chunk ${DELAY} ms each way ($((2 * DELAY)) ms round trip; TCP's handshake is not delayed, so"
echo "the tap's new connection would add one round trip on a real WAN). Asked: from the stand-in's POST that sends"
echo "permission.asked until the message reaches a reader of the topic on the VPS. Tap: from the start of the button's request"
echo "(the action's method, URL, headers and body, through the phone's link) until the stand-in lists the answer (polled every"
echo "2 ms at home). Idle: context switches of every thread of home up over $IDLE s after the samples (the stand-in's heartbeat"
echo "every 10 s and ntfy's keepalive on the reply stream the only traffic). Load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)."
