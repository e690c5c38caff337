#!/usr/bin/env bash
# Bulk through `tunnel up` built on libssh2 1.11 against `ssh -L`, in one run, on the same sshd:
# the octunnel built in the Debian 13 root (scripts/lib/debian-leg.sh's binary, libssh2 1.11.1)
# and Debian 13's ssh client, both run in that root through chroot, to Debian 13's sshd
# (OpenSSH 10) and one nginx on this machine's loopback; ssh -L on the cipher and MAC octunnel
# negotiated (its "connected" line). BENCH_BULK_MB (default 1024) MiB downloaded with curl,
# BENCH_BULK_RUNS (default 3) alternating runs each; prints the medians in MB/s and the ratio
# (goal: octunnel >= 0.8x ssh -L). BENCH_BULK_CIPHERS sets sshd's Ciphers (e.g. aes128-ctr, to
# see what octunnel's next choice would do). bench.sh runs it (BENCH_DEB13=0 skips); it runs on its own too.
set -euo pipefail
cd "$(dirname "$0")/../.."
BULK_MB=${BENCH_BULK_MB:-1024}
RUNS=${BENCH_BULK_RUNS:-3}

. scripts/lib/sshd.sh
. scripts/lib/roots.sh
install_missing nginx-light curl

work=$(mktemp -d /tmp/octunnel-bulk13.XXXXXX)
pids=()
cleanup() {
  stop_started "${pids[@]}"
  wait 2>/dev/null || true
  root_unmount_all || true
  [ -n "${BULK_KEEP:-}" ] || rm -rf "$work"
}
trap cleanup EXIT
octunnel_in_trixie .build-package-deb13
root=$trixie_root
oct="$PWD/.build-package-deb13/release/octunnel"
# "${in13[@]}" COMMAND...: in the root, with the environment a user has; chroot and env exec, so
# a command started in the background is $! itself, and the cleanup waits for it to end before
# it unmounts.
in13=($as_root chroot "$root" /usr/bin/env -i PATH=/usr/bin:/bin HOME="$work" LANG=C.UTF-8)

web_port=$(free_port)
mkdir -p "$work/www/global" "$work/nginx"
echo '{"healthy":true,"version":"1.0.0"}' > "$work/www/global/health"   # tunnel up's health test
truncate -s "${BULK_MB}M" "$work/www/bulk"
cat > "$work/nginx/nginx.conf" <<CONF
$([ "$(id -u)" -eq 0 ] && echo "user root;")
worker_processes 1;
daemon off;
pid $work/nginx/nginx.pid;
error_log $work/nginx/error.log;
events { worker_connections 64; }
http { access_log off; server { listen 127.0.0.1:$web_port; root $work/www; default_type application/json; } }
CONF
nginx -c "$work/nginx/nginx.conf" -p "$work/nginx" & pids+=($!)

"${in13[@]}" "$oct" keygen --home "$work/home" > "$work/authorized_keys"
ssh_port=$(free_port)
ssh-keygen -q -t ed25519 -N '' -f "$work/hostkey"
ciphers=(); [ -z "${BENCH_BULK_CIPHERS:-}" ] || ciphers=("Ciphers $BENCH_BULK_CIPHERS")
write_sshd_config "$work/sshd_config" "$ssh_port" 127.0.0.1 "$work/hostkey" "$work/authorized_keys" "PidFile $work/sshd.pid" "LogLevel VERBOSE" \
  "${ciphers[@]}"
$as_root mkdir -p "$root/run/sshd"
$as_root chroot "$root" /usr/sbin/sshd -D -f "$work/sshd_config" -E "$work/sshd.log" & pids+=($!)
wait_port "$ssh_port" || fail "sshd did not start: $(cat "$work/sshd.log")"
wait_port "$web_port" || fail "nginx did not start"

oct_port=$(free_port)
"${in13[@]}" "$oct" tunnel up --home "$work/home" "root@127.0.0.1:$ssh_port" --local-port "$oct_port" --remote-port "$web_port" \
  > "$work/oct.log" 2>&1 & pids+=($!)
wait_port "$oct_port" || fail "tunnel up did not listen: $(cat "$work/oct.log")"
for _ in $(seq 300); do grep -q "^connected to .*, " "$work/oct.log" && break; sleep 0.05; done
negotiated=$(sed -n 's/^connected to [^ ]* (\(.*\), \(.*\))$/\1 \2/p' "$work/oct.log" | head -1)
cipher=${negotiated% *}; mac=${negotiated#* }
[ -n "$cipher" ] || fail "no connected line: $(cat "$work/oct.log")"
# An AEAD cipher has no separate MAC (octunnel says so in its own words); ssh then takes none.
mac_option=(); case "$cipher" in *gcm*|*poly1305*) ;; *) mac_option=(-m "$mac") ;; esac
ssh_port_local=$(free_port)
"${in13[@]}" ssh -N -o BatchMode=yes -o StrictHostKeyChecking=no -o UserKnownHostsFile="$work/ssh_known_hosts" -i "$work/home/id_ed25519" \
  -c "$cipher" "${mac_option[@]}" -L "127.0.0.1:$ssh_port_local:127.0.0.1:$web_port" -p "$ssh_port" root@127.0.0.1 & pids+=($!)
wait_port "$ssh_port_local" || fail "ssh -L did not listen"

mbps() { curl -s -o /dev/null -w '%{speed_download}' "http://127.0.0.1:$1/bulk" | awk '{printf "%.0f", $1/1e6}'; }
median() { printf '%s\n' "$@" | sort -n | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}'; }
oct_runs=(); ssh_runs=()
for _ in $(seq "$RUNS"); do
  oct_runs+=("$(mbps "$oct_port")")
  ssh_runs+=("$(mbps "$ssh_port_local")")
done
oct_mbps=$(median "${oct_runs[@]}"); ssh_mbps=$(median "${ssh_runs[@]}")
ratio=$(awk -v a="$oct_mbps" -v b="$ssh_mbps" 'BEGIN {printf "%.2f", a/b}')
grep -q "kex: client->server cipher: $cipher" "$work/sshd.log" || echo "   note: sshd's log does not show $cipher for every session" >&2
echo "bulk ${BULK_MB} MiB on Debian 13 (libssh2 $("${in13[@]}" "$oct" --version | sed 's/.*libssh2 \([^)]*\)).*/\1/'), $("${in13[@]}" /usr/sbin/sshd -V 2>&1 | cut -d, -f1)), $cipher${mac_option:+ + $mac}: tunnel up ${oct_mbps} MB/s (${oct_runs[*]}), ssh -L ${ssh_mbps} MB/s (${ssh_runs[*]}), ratio ${ratio}x (goal 0.8x); load $(cut -d' ' -f1-3 /proc/loadavg)"
