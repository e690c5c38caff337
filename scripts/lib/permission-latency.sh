# Sourced by scripts/bench.sh inside its emulated WAN (issue 48's goal: a permission answered from
# a terminal reaches OpenCode within 1 s of the command, over the WAN relay).
# permission_latency: the OpenCode stand-in (1.x) on the VPS side holds a pending permission; on the
# client side `tunnel up` (a home of its own, --no-notify) and beside it the other tunnel (ssh -L,
# or BENCH_VERSUS's octunnel). Each sample adds one pending request on the VPS side, then times
# the whole `octunnel permission allow ID` (process start, the status socket, the pending list
# and the reply, each a request over the WAN) until it exits, the reply recorded by OpenCode; and
# for the other, the reply alone (one POST of the same body through it): what a client that
# already knows the id and the password gives at best. Sets R[wan_oct_permission],
# R[wan_ssh_permission] (medians, ms), R[wan_permission_all], or R[wan_permission_skip] with why.
permission_latency() {
  local samples=${BENCH_PERMISSION_SAMPLES:-10} standin oct_port ssh_port i id t0 t1 home="$work/home-permission"
  local -a oct=() other=()
  ip netns exec "$wan_s" python3 scripts/opencode-standin.py --port 0 --flavor opencode1 --quiet > "$work/standin-permission.out" 2>&1 &
  pids+=($!)
  for _ in $(seq 200); do grep -q '^LISTENING' "$work/standin-permission.out" 2>/dev/null && break; sleep 0.05; done
  standin=$(awk '/^LISTENING/ {print $2}' "$work/standin-permission.out")
  [ -n "$standin" ] || { R[wan_permission_skip]="the stand-in did not start"; return 0; }
  cp -a "$work/home" "$home"   # the same key and known host; a status socket of its own
  oct_port=$(free_port); ssh_port=$(free_port)
  ip netns exec "$wan_c" "$OCT" tunnel up --home "$home" "$user@$wan_server:22" --local-port "$oct_port" --remote-port "$standin" \
    --no-pair-port --no-notify 2> "$work/octunnel-permission.log" & pids+=($!)
  b_up "$wan_c" "$ssh_port" "$wan_server" 22 "$standin" "$work/ssh-permission.log"; pids+=($!)
  wait_http_in "$wan_c" "$ssh_port"; wait_http_in "$wan_c" "$oct_port"
  # pending SESSION: adds a pending request on the VPS side, prints its id.
  pending() {
    ip netns exec "$wan_s" python3 -c 'import json, sys, urllib.request
r = urllib.request.urlopen(urllib.request.Request("http://127.0.0.1:%s/standin/permission" % sys.argv[1],
    data=json.dumps({"sessionID": sys.argv[2], "permission": "bash", "patterns": ["make"], "emit": False}).encode(), method="POST"))
print(json.load(r)["id"])' "$standin" "$1"
  }
  replies() { ip netns exec "$wan_s" python3 -c 'import json, sys, urllib.request
print(len(json.load(urllib.request.urlopen("http://127.0.0.1:%s/standin/replies" % sys.argv[1]))["replies"]))' "$standin"; }
  for i in $(seq "$samples"); do
    id=$(pending "ses-perm-$$-$i")
    t0=$(ms_now)
    ip netns exec "$wan_c" "$OCT" permission allow "$id" --home "$home" > /dev/null 2>> "$work/permission-allow.log" && t1=$(ms_now) && oct+=($((t1 - t0)))
    id=$(pending "ses-other-$$-$i")
    t0=$(ms_now)
    ip netns exec "$wan_c" python3 -c 'import sys, urllib.request
urllib.request.urlopen(urllib.request.Request("http://127.0.0.1:%s/permission/%s/reply" % (sys.argv[1], sys.argv[2]),
    data=b"{\"reply\":\"once\"}", headers={"Content-Type": "application/json"}, method="POST")).read()' "$ssh_port" "$id" && t1=$(ms_now) &&
      other+=($((t1 - t0)))
  done
  [ "$(replies)" -eq $((2 * samples)) ] || { R[wan_permission_skip]="replies recorded: $(replies) of $((2 * samples)) ($(tail -1 "$work/permission-allow.log" 2>/dev/null))"; return 0; }
  [ ${#oct[@]} -gt 0 ] && [ ${#other[@]} -gt 0 ] || { R[wan_permission_skip]="samples missing (octunnel ${#oct[@]}, other ${#other[@]} of $samples)"; return 0; }
  R[wan_oct_permission]=$(median_of "${oct[@]}"); R[wan_ssh_permission]=$(median_of "${other[@]}")
  R[wan_permission_all]="octunnel ${oct[*]}; other ${other[*]}"; R[wan_permission_samples]=$samples
}
