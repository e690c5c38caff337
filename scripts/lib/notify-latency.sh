# Sourced by scripts/bench.sh inside its emulated WAN (issue 40's goal: from the moment OpenCode
# sends an event to the notification, at most 1 s through the tunnel over the WAN).
# notify_latency: the OpenCode stand-in (1.x) on the VPS side; `tunnel up` on the client side with
# its health test (which starts the event follower) and --notify-command, a program that writes
# the time it ran; beside it the other tunnel (ssh -L, or BENCH_VERSUS's octunnel) with a client
# reading the same event stream through it (scripts/lib/notify-latency.py read): the bytes alone,
# what a tunnel that does not notify gives at best. Each sample POSTs the events on the VPS side
# and times from just before the POST to the program's run (octunnel) and to the event's arrival
# at the reader (the other). A permission is told as it comes; "finished" waits 0.5 s after the
# idle for signs of work (AgentSessionWatch's settle), so its row includes that wait.
# Sets R[wan_oct_notify_perm], R[wan_ssh_notify_perm], R[wan_oct_notify_finished],
# R[wan_ssh_notify_finished] (medians, ms) and R[wan_notify_all] (every sample), or
# R[wan_notify_skip] with why.
notify_latency() {
  local samples=${BENCH_NOTIFY_SAMPLES:-10} standin oct_port ssh_port i sid sent got rec="$work/notify.rec"
  local -a oct_perm=() ssh_perm=() oct_fin=() ssh_fin=()
  ip netns exec "$wan_s" python3 scripts/opencode-standin.py --port 0 --flavor opencode1 --quiet > "$work/standin-notify.out" 2>&1 &
  pids+=($!)
  for _ in $(seq 200); do grep -q '^LISTENING' "$work/standin-notify.out" 2>/dev/null && break; sleep 0.05; done
  standin=$(awk '/^LISTENING/ {print $2}' "$work/standin-notify.out")
  [ -n "$standin" ] || { R[wan_notify_skip]="the stand-in did not start"; return 0; }
  printf '#!/bin/sh\necho "$(date +%%s%%N) $OCTUNNEL_EVENT $OCTUNNEL_SESSION_ID" >> %s\n' "$rec" > "$work/notify-record.sh"
  chmod +x "$work/notify-record.sh"; : > "$rec"
  oct_port=$(free_port); ssh_port=$(free_port)
  ip netns exec "$wan_c" "$OCT" tunnel up --home "$work/home" "$user@$wan_server:22" --local-port "$oct_port" --remote-port "$standin" \
    --no-pair-port --notify-command "$work/notify-record.sh" 2> "$work/octunnel-notify.log" & pids+=($!)
  b_up "$wan_c" "$ssh_port" "$wan_server" 22 "$standin" "$work/ssh-notify.log"; pids+=($!)
  wait_http_in "$wan_c" "$ssh_port"
  ip netns exec "$wan_c" python3 scripts/lib/notify-latency.py read "$ssh_port" /global/event > "$work/ssh-events.txt" 2>&1 & pids+=($!)
  for _ in $(seq 400); do grep -q 'notifications: following' "$work/octunnel-notify.log" 2>/dev/null && break; sleep 0.05; done
  grep -q 'notifications: following' "$work/octunnel-notify.log" || { R[wan_notify_skip]="tunnel up did not follow the events: $(tail -2 "$work/octunnel-notify.log" | tr '\n' ' ')"; return 0; }
  post() { ip netns exec "$wan_s" python3 scripts/lib/notify-latency.py post "$standin" "$1"; }
  # arrival FILE PATTERN: the time (ns) of the first line matching PATTERN, waiting up to 10 s
  arrival() { local t; for _ in $(seq 200); do t=$(awk -v p="$2" '$0 ~ p {print $1; exit}' "$1"); [ -n "$t" ] && { echo "$t"; return; }; sleep 0.05; done; echo ""; }
  ms_since() { [ -n "$2" ] && awk -v a="$1" -v b="$2" 'BEGIN {printf "%.0f", (b - a) / 1e6}' || echo ""; }
  for i in $(seq "$samples"); do
    sid="perm-$$-$i"
    sent=$(post "{\"type\":\"permission.asked\",\"fields\":{\"sessionID\":\"$sid\",\"id\":\"p-$i\",\"permission\":\"bash\",\"patterns\":[\"make\"]}}")
    got=$(ms_since "$sent" "$(arrival "$rec" "permission $sid\$")"); [ -n "$got" ] && oct_perm+=("$got")
    got=$(ms_since "$sent" "$(arrival "$work/ssh-events.txt" " $sid\$")"); [ -n "$got" ] && ssh_perm+=("$got")
    sid="done-$$-$i"
    post "{\"type\":\"session.status\",\"fields\":{\"sessionID\":\"$sid\",\"status\":{\"type\":\"busy\"}}}" > /dev/null
    # The idle is the second event of the session the reader sees: time it from its own line.
    sent=$(post "{\"type\":\"session.status\",\"fields\":{\"sessionID\":\"$sid\",\"status\":{\"type\":\"idle\"}}}")
    got=$(ms_since "$sent" "$(arrival "$rec" "finished $sid\$")"); [ -n "$got" ] && oct_fin+=("$got")
    for _ in $(seq 200); do [ "$(grep -c " $sid\$" "$work/ssh-events.txt")" -ge 2 ] && break; sleep 0.05; done
    got=$(ms_since "$sent" "$(grep " $sid\$" "$work/ssh-events.txt" | sed -n 2p | cut -d' ' -f1)"); [ -n "$got" ] && ssh_fin+=("$got")
  done
  [ ${#oct_perm[@]} -gt 0 ] && [ ${#ssh_perm[@]} -gt 0 ] && [ ${#oct_fin[@]} -gt 0 ] && [ ${#ssh_fin[@]} -gt 0 ] ||
    { R[wan_notify_skip]="samples missing (octunnel ${#oct_perm[@]}/${#oct_fin[@]}, other ${#ssh_perm[@]}/${#ssh_fin[@]} of $samples)"; return 0; }
  R[wan_oct_notify_perm]=$(median_of "${oct_perm[@]}"); R[wan_ssh_notify_perm]=$(median_of "${ssh_perm[@]}")
  R[wan_oct_notify_finished]=$(median_of "${oct_fin[@]}"); R[wan_ssh_notify_finished]=$(median_of "${ssh_fin[@]}")
  R[wan_notify_all]="permission: octunnel ${oct_perm[*]}, other ${ssh_perm[*]}; finished: octunnel ${oct_fin[*]}, other ${ssh_fin[*]}"
  R[wan_notify_samples]=$samples
}
