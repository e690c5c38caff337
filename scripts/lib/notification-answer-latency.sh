# Sourced by scripts/bench.sh inside its emulated WAN, after permission-latency.sh (issue 48's
# goal, the click half: a permission answered from its notification reaches OpenCode within 1 s
# of the click, over the WAN relay).
# notification_answer_latency: a desktop of the bench's own in the root namespace, as the tests'
# DesktopSession makes one (dbus-daemon on a socket path, Xvfb, dunst with a dmenu that picks the
# action written to a file); the OpenCode stand-in (1.x) on the VPS side; `tunnel up` on the
# client side with that desktop (notifications on, a home of its own). Each sample asks one
# permission on the stand-in (its permission.asked goes down the event stream: a notification
# with actions), waits until dunst shows it, then clicks "Allow once" as a user's menu click does
# (`dunstctl context`, the action picked) and times from the click until the stand-in has
# recorded the reply (polled on the VPS side). Sets R[wan_oct_click] (median, ms),
# R[wan_click_all], R[wan_click_samples], or R[wan_click_skip] with why.
notification_answer_latency() {
  local samples=${BENCH_PERMISSION_SAMPLES:-10} desk="$work/desktop" standin port home="$work/home-click" i id t0 t1 before bus display
  local -a clicks=()
  local program
  for program in /usr/bin/dbus-daemon /usr/bin/Xvfb /usr/bin/dunst /usr/bin/dunstctl /usr/bin/notify-send; do
    [ -x "$program" ] || { R[wan_click_skip]="$program is missing (scripts/lib/packages.sh: OCTUNNEL_DESKTOP)"; return 0; }
  done
  mkdir -p "$desk"
  env -i PATH=/usr/bin:/bin HOME="$desk" dbus-daemon --session --nofork --nopidfile --print-address=1 \
    --address="unix:path=$desk/bus" > "$desk/bus.out" 2>&1 & pids+=($!)
  env -i PATH=/usr/bin:/bin HOME="$desk" Xvfb -displayfd 1 -nolisten tcp -screen 0 640x480x24 > "$desk/x.out" 2> "$desk/x.err" & pids+=($!)
  for _ in $(seq 200); do grep -q '^unix:' "$desk/bus.out" 2>/dev/null && grep -q '^[0-9]' "$desk/x.out" 2>/dev/null && break; sleep 0.05; done
  bus=$(head -1 "$desk/bus.out"); display=":$(head -1 "$desk/x.out")"
  [[ "$bus" == unix:* && "$display" != ":" ]] || { R[wan_click_skip]="the session bus or Xvfb did not start"; return 0; }
  printf '#!/bin/sh\nline=$(/usr/bin/grep -m 1 -F ",$(/usr/bin/cat %s 2>/dev/null)]")\n[ -n "$line" ] && echo "$line" >> %s\necho "$line"\n' \
    "$desk/pick" "$desk/picked" > "$desk/pick.sh"
  chmod 755 "$desk/pick.sh"
  printf '[global]\n    dmenu = %s\n' "$desk/pick.sh" > "$desk/dunstrc"
  local -a session=(env -i PATH=/usr/bin:/bin HOME="$desk" DBUS_SESSION_BUS_ADDRESS="$bus" DISPLAY="$display")
  "${session[@]}" dunst -conf "$desk/dunstrc" -print > "$desk/dunst.out" 2> "$desk/dunst.err" & pids+=($!)
  for _ in $(seq 200); do "${session[@]}" dunstctl is-paused > /dev/null 2>&1 && break; sleep 0.05; done
  "${session[@]}" dunstctl is-paused > /dev/null 2>&1 || { R[wan_click_skip]="dunst did not take the Notifications name"; return 0; }

  ip netns exec "$wan_s" python3 scripts/opencode-standin.py --port 0 --flavor opencode1 --quiet > "$work/standin-click.out" 2>&1 &
  pids+=($!)
  for _ in $(seq 200); do grep -q '^LISTENING' "$work/standin-click.out" 2>/dev/null && break; sleep 0.05; done
  standin=$(awk '/^LISTENING/ {print $2}' "$work/standin-click.out")
  [ -n "$standin" ] || { R[wan_click_skip]="the stand-in did not start"; return 0; }
  cp -a "$work/home" "$home"
  port=$(free_port)
  DBUS_SESSION_BUS_ADDRESS="$bus" DISPLAY="$display" ip netns exec "$wan_c" "$OCT" tunnel up --home "$home" "$user@$wan_server:22" \
    --local-port "$port" --remote-port "$standin" --no-pair-port 2> "$work/octunnel-click.log" & pids+=($!)
  wait_http_in "$wan_c" "$port"
  # vps PATH [JSON]: a request to the stand-in on the VPS side (POST with JSON), its answer.
  vps() {
    ip netns exec "$wan_s" python3 -c 'import sys, urllib.request
data = sys.argv[3].encode() if len(sys.argv) > 3 else None
print(urllib.request.urlopen(urllib.request.Request("http://127.0.0.1:%s%s" % (sys.argv[1], sys.argv[2]), data=data,
    method="POST" if data else "GET")).read().decode())' "$standin" "$@"
  }
  replies() { vps /standin/replies | python3 -c 'import json, sys; print(len(json.load(sys.stdin)["replies"]))'; }
  # The follower listens once an event reaches a stream (it starts after the health test passes).
  for _ in $(seq 300); do
    vps /standin/emit '{"type":"server.heartbeat","fields":{}}' | grep -q '"streams":[1-9]' && break; sleep 0.1
  done
  vps /standin/emit '{"type":"server.heartbeat","fields":{}}' | grep -q '"streams":[1-9]' ||
    { R[wan_click_skip]="tunnel up never followed the event stream ($(tail -1 "$work/octunnel-click.log"))"; return 0; }
  echo once > "$desk/pick"
  for i in $(seq "$samples"); do
    before=$(replies)
    id=$(vps /standin/permission "{\"sessionID\":\"ses-click-$$-$i\",\"permission\":\"bash\",\"patterns\":[\"make\"]}" |
      python3 -c 'import json, sys; print(json.load(sys.stdin)["id"])')
    # Shown: printed by dunst and on screen (its menu lists only the notifications displayed).
    for _ in $(seq 400); do
      [ "$(grep -c 'OpenCode asks for permission' "$desk/dunst.out")" -ge "$i" ] &&
        [ "$("${session[@]}" dunstctl count displayed 2>/dev/null)" -ge 1 ] && break
      sleep 0.02
    done
    rm -f "$desk/picked" "$desk/seen"
    # On the VPS side, a watcher polls the stand-in's replies every 2 ms in one process and
    # writes the wall-clock ms (ms_now's clock) it saw the reply at; "ready" once it polls.
    ip netns exec "$wan_s" python3 -c 'import json, sys, time, urllib.request
def count():
    return len(json.load(urllib.request.urlopen("http://127.0.0.1:%s/standin/replies" % sys.argv[1]))["replies"])
print("ready", flush=True)
until = time.time() + 10
while count() <= int(sys.argv[2]) and time.time() < until:
    time.sleep(0.002)
print(int(time.time() * 1000) if time.time() < until else "timeout", flush=True)' "$standin" "$before" > "$desk/seen" &
    watcher=$!
    for _ in $(seq 200); do grep -q ready "$desk/seen" 2>/dev/null && break; sleep 0.01; done
    t0=$(ms_now)
    "${session[@]}" dunstctl context
    wait "$watcher" || true
    t1=$(tail -1 "$desk/seen")
    [[ "$t1" =~ ^[0-9]+$ ]] && [ -f "$desk/picked" ] && clicks+=($((t1 - t0)))
    # The next sample starts with no notification of this one left on screen.
    for _ in $(seq 200); do [ "$("${session[@]}" dunstctl count displayed 2>/dev/null)" = 0 ] && break; sleep 0.02; done
  done
  [ ${#clicks[@]} -gt 0 ] || { R[wan_click_skip]="no click reached OpenCode of $samples ($(grep -m1 'warning' "$work/octunnel-click.log"))"; return 0; }
  grep -q "allowed once from the notification" "$work/octunnel-click.log" ||
    { R[wan_click_skip]="tunnel up never said a reply was sent"; return 0; }
  R[wan_oct_click]=$(median_of "${clicks[@]}"); R[wan_click_all]="${clicks[*]}"; R[wan_click_samples]="${#clicks[@]} of $samples"
}
