#!/usr/bin/env bash
# The port reclaim (issues 19 and 28): a home reboots while a phone keeps trying. A VPS
# namespace (sshd with its defaults), a home, a laptop and a rebooted home each on a link of
# their own; home up at home, tunnel up on the laptop, a phone there starting a request every
# 0.5 s (curl, 3 s a try). The home's link goes down without a FIN and its home up is killed;
# 2 s later a new home up starts from the rebooted home's namespace (a new address). The row is
# the time from the new home up's start until the phone is served, with sshd reached directly,
# through Debian's sslh (SSH on a shared port) and through a plain TCP relay
# (scripts/lib/delay-relay.py, no delay): behind a relay only the mark's heartbeat can prove
# the old session dead. Root only. `bash scripts/lib/reclaim.sh` (OCT=path/to/octunnel to skip
# the release build; BENCH_RECLAIM_MODES="direct sslh tcp" to choose); prints the rows.
set -euo pipefail
cd "$(dirname "$0")/../.."
MODES=${BENCH_RECLAIM_MODES:-direct sslh tcp}
LIMIT=${BENCH_RECLAIM_LIMIT:-60}   # seconds before a row says "> LIMIT"
. scripts/lib/sshd.sh
if [ -z "${OCT:-}" ]; then
  swift build -c release --product octunnel 2>&1 | tail -1
  OCT="$(swift build -c release --show-bin-path)/octunnel"
fi
[ "$(id -u)" -eq 0 ] || { echo "reclaim: skipped (not root: network namespaces need CAP_SYS_ADMIN and CAP_NET_ADMIN)" >&2; exit 0; }
case " $MODES " in *" sslh "*) [ -x /usr/sbin/sslh ] || { echo "reclaim: sslh is not installed (apt-get install sslh)" >&2; exit 1; };; esac

work=$(mktemp -d /tmp/octunnel-reclaim.XXXXXX)
base="octrecl-$$-$RANDOM"
pids=()
cleanup() {
  trap - EXIT INT TERM
  stop_started "${pids[@]}"
  wait 2>/dev/null || true
  for ns in $(ip netns list | awk '{print $1}' | grep "^$base-" || true); do ip netns delete "$ns" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
ms_now() { date +%s%3N; }
user=$(id -un)

# link NS DEV: a namespace joined to the VPS by a veth on its own /30 (no IPv6 link-local
# addresses, whose arrival 2 s later would be a network change of its own); echoes its VPS-side address.
link() {
  local ns=$1 dev=$2 net="10.$((150 + RANDOM % 50)).$((RANDOM % 256))"
  ip netns add "$ns"; ip -n "$ns" link set lo up
  ip -n "$ns" link add "$dev" type veth peer name "$dev" netns "$V"
  ip -n "$ns" link set "$dev" addrgenmode none; ip -n "$V" link set "$dev" addrgenmode none
  ip -n "$ns" addr add "$net.1/30" dev "$dev"; ip -n "$V" addr add "$net.2/30" dev "$dev"
  ip -n "$ns" link set "$dev" up; ip -n "$V" link set "$dev" up
  echo "$net.2"
}

# served_after FILE START_MS: ms from START_MS until the phone's first success that ended after it.
served_after() {
  local deadline=$(( $(ms_now) + LIMIT * 1000 ))
  while [ "$(ms_now)" -lt "$deadline" ]; do
    local t; t=$(awk -v s="$2" '$1 == "ok" && $2 > s { print $2 - s; exit }' "$1" 2>/dev/null)
    [ -n "$t" ] && { echo "$t"; return; }
    sleep 0.1
  done
  echo "> ${LIMIT}000"
}

# run MODE: one reboot, sshd reached as MODE says; writes the ms until the phone is served to $work/MODE.ms.
run() {
  local mode=$1 dir="$work/$1"
  mkdir -p "$dir/www/global" "$dir/laptop" "$dir/home"
  echo '{"healthy":true,"version":"1.0.0"}' > "$dir/www/global/health"
  V="$base-$mode-v"; ip netns add "$V"; ip -n "$V" link set lo up
  local vps; vps=$(link "$base-$mode-h" ha)
  local laptop_vps; laptop_vps=$(link "$base-$mode-l" la)
  local reboot_vps; reboot_vps=$(link "$base-$mode-r" ra)
  # Everyone reaches the VPS at the home link's address, routed over their own link.
  ip -n "$base-$mode-l" route add "$vps/32" via "$laptop_vps" dev la
  ip -n "$base-$mode-r" route add "$vps/32" via "$reboot_vps" dev ra
  local port=22 remote=18080
  "$OCT" keygen --home "$dir/laptop" >/dev/null 2>&1
  "$OCT" keygen --home "$dir/home" >/dev/null 2>&1
  ssh-keygen -q -t ed25519 -N '' -f "$dir/hostkey"
  { "$OCT" pubkey --home "$dir/laptop"; "$OCT" pubkey --restrict --listen --remote-port "$remote" --home "$dir/home"; } > "$dir/authorized_keys"
  if [ "$mode" = direct ]; then
    write_sshd_config "$dir/sshd_config" 22 0.0.0.0 "$dir/hostkey" "$dir/authorized_keys" "PidFile $dir/sshd.pid"
  else
    port=443
    write_sshd_config "$dir/sshd_config" 22 127.0.0.1 "$dir/hostkey" "$dir/authorized_keys" "PidFile $dir/sshd.pid"
  fi
  ip netns exec "$V" /usr/sbin/sshd -D -f "$dir/sshd_config" -E "$dir/sshd.log" </dev/null & pids+=($!)
  for _ in $(seq 100); do grep -q "Server listening" "$dir/sshd.log" 2>/dev/null && break; sleep 0.05; done
  case "$mode" in
    sslh) ip netns exec "$V" /usr/sbin/sslh -f -n -p "0.0.0.0:443" --ssh "127.0.0.1:22" >"$dir/relay.log" 2>&1 & pids+=($!) ;;
    tcp) ip netns exec "$V" python3 scripts/lib/delay-relay.py 0.0.0.0 443 127.0.0.1 22 0 >"$dir/relay.log" 2>&1 & pids+=($!) ;;
  esac
  [ "$mode" = direct ] || for _ in $(seq 100); do ip netns exec "$V" ss -ltnH sport = :443 | grep -q 443 && break; sleep 0.05; done

  # The home (and the rebooted home): the web server home up forwards to.
  for ns in "$base-$mode-h" "$base-$mode-r"; do
    ip netns exec "$ns" python3 -m http.server 8080 --bind 127.0.0.1 --directory "$dir/www" >/dev/null 2>&1 & pids+=($!)
  done
  home_up() { ip netns exec "$1" "$OCT" home up --home "$dir/home" "$user@$vps:$port" --remote-port "$remote" --home-port 8080 \
    --connect-timeout 10 --no-health </dev/null 2>>"$dir/home.log" & pids+=($!); }
  home_up "$base-$mode-h"; local first=$!
  for _ in $(seq 200); do grep -q " → home " "$dir/home.log" 2>/dev/null && break; sleep 0.05; done
  ip netns exec "$base-$mode-l" "$OCT" tunnel up --home "$dir/laptop" "$user@$vps:$port" --local-port 4096 --remote-port "$remote" \
    --connect-timeout 10 --no-health </dev/null 2>"$dir/tunnel.log" & pids+=($!)
  ip netns exec "$base-$mode-l" bash -c 'while true; do
    ( s=$(date +%s%3N); if curl -sf -m 3 -o /dev/null http://127.0.0.1:4096/global/health; then echo "ok $(date +%s%3N) $s"; else echo "fail $(date +%s%3N) $s"; fi ) &
    sleep 0.5
  done' </dev/null >"$dir/phone.log" 2>/dev/null & pids+=($!)
  [ "$(served_after "$dir/phone.log" 0)" != "> ${LIMIT}000" ] || {
    echo "reclaim: $mode: the phone was never served" >&2; cat "$dir/home.log" "$dir/tunnel.log" >&2; tail -3 "$dir/phone.log" >&2; return 1; }

  # The power cut: link down first (no FIN leaves), then home up dies; back 2 s later elsewhere.
  ip -n "$base-$mode-h" link set ha down
  kill -9 "$first"
  sleep 2
  local t0; t0=$(ms_now)
  home_up "$base-$mode-r"
  served_after "$dir/phone.log" "$t0" > "$work/$mode.ms"
  grep -h "taken back" "$dir/home.log" | tail -1 | sed "s/^/reclaim: $mode: home up said: /" >&2
}

seconds() { case "$1" in ">"*) echo "> $LIMIT s";; *) awk -v ms="$1" 'BEGIN {printf "%.1f s", ms / 1000}';; esac; }
echo "| sshd reached | the phone served after the new home up started |"
echo "|---|---|"
for mode in $MODES; do
  run "$mode"
  echo "| $mode | $(seconds "$(cat "$work/$mode.ms")") |"
done
echo "(load average at the end: $(cut -d' ' -f1-3 /proc/loadavg))"
