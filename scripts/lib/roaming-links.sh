# A laptop that roams, as scripts/lib/roaming.sh and scripts/soak.sh (SOAK_MOVE_EVERY) make it: a laptop
# namespace with two links to a VPS namespace, and sshd in the VPS namespace. Sourced after sshd.sh (root only).
#   roam_links L V                   the namespaces L (the laptop) and V (the VPS), joined by two veth links,
#                                    rma and rmb, each a random /30 of its own: $a.1 and $b.1 the laptop's
#                                    addresses, $a.2 and $b.2 the VPS's; vps=$a.2 (the laptop reaches it
#                                    over rma). No IPv6 addresses (no duplicate-address detection to wait on).
#   roam_vps V WORK PORT [LINE...]   octunnel's key in WORK/home (made with "$OCT"), a host key, and sshd
#                                    in V on $vps:PORT authorizing that key (each LINE added to its config),
#                                    listening when this returns; its PID added to the caller's pids.
#   roam_move L N                    the Nth move (0, 1, …) of a laptop going from one network to the other
#                                    and back: the address its sessions use vanishes (no FIN, no RST), then
#                                    the other link gets its address and carries the VPS. Even N: from rma
#                                    to rmb; odd N: back. Fails if any of its ip commands fails.

roam_links() {
  local L=$1 V=$2 ns dev
  a="10.$((200 + RANDOM % 50)).$((RANDOM % 256))"; b="10.$((100 + RANDOM % 50)).$((RANDOM % 256))"
  vps="$a.2"
  ip netns add "$L"; ip netns add "$V"
  for ns in "$L" "$V"; do ip -n "$ns" link set lo up; done
  ip -n "$L" link add rma type veth peer name rma netns "$V"
  ip -n "$L" link add rmb type veth peer name rmb netns "$V"
  for dev in rma rmb; do
    ip -n "$L" link set "$dev" addrgenmode none; ip -n "$V" link set "$dev" addrgenmode none
  done
  ip -n "$L" addr add "$a.1/30" dev rma; ip -n "$V" addr add "$a.2/30" dev rma
  ip -n "$L" addr add "$b.1/30" dev rmb; ip -n "$V" addr add "$b.2/30" dev rmb
  for ns in "$L" "$V"; do ip -n "$ns" link set rma up; ip -n "$ns" link set rmb up; done
}

roam_vps() {
  local V=$1 work=$2 port=$3
  shift 3
  "$OCT" keygen --home "$work/home" >/dev/null 2>&1
  ssh-keygen -q -t ed25519 -N '' -f "$work/hostkey"
  "$OCT" pubkey --home "$work/home" > "$work/authorized_keys"
  write_sshd_config "$work/sshd_config" "$port" "$vps" "$work/hostkey" "$work/authorized_keys" "$@" "PidFile $work/sshd.pid"
  ip netns exec "$V" /usr/sbin/sshd -D -f "$work/sshd_config" -E "$work/sshd.log" & pids+=($!)
  local _
  for _ in $(seq 200); do grep -q "Server listening" "$work/sshd.log" 2>/dev/null && return 0; sleep 0.05; done
  echo "roaming: sshd did not start: $(tail -2 "$work/sshd.log")" >&2
  return 1
}

roam_move() {
  local L=$1 n=$2
  if (( n % 2 == 0 )); then
    ip -n "$L" addr del "$a.1/30" dev rma &&
      ip -n "$L" addr replace "$b.1/30" dev rmb &&
      ip -n "$L" route replace "$vps/32" via "$b.2" dev rmb
  else
    ip -n "$L" addr del "$b.1/30" dev rmb &&   # the route over rmb goes with it
      { ip -n "$L" route del "$vps/32" 2>/dev/null || true; } &&
      ip -n "$L" addr replace "$a.1/30" dev rma
  fi
}

# roam_quiet NS...: polls (up to 10 s) until no process is left in the namespaces (the caller stopped what it
# started; sshd's session children take a moment), then stops what is left there by its PID: a namespace is
# deleted only after its processes are gone.
roam_quiet() {
  local ns _ left
  for _ in $(seq 100); do
    left=$(for ns in "$@"; do ip netns pids "$ns" 2>/dev/null; done)
    [ -z "$left" ] && return 0
    sleep 0.1
  done
  echo "roaming: stopping what was left in the namespaces: $(echo $left)" >&2
  kill -CONT $left 2>/dev/null || true; kill -KILL $left 2>/dev/null || true
}
