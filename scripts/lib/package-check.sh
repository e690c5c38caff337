# Sourced by package.sh: the package's proof on a machine that never saw Swift.
#   package_check DEB VERSION CODENAME
# A fresh copy of the clean minbase root of CODENAME (debian-root.sh; made once, then copied
# for each check), where it installs an older build (DEB with Version 0.1.0, what every build
# said before versions moved), runs `apt-get install ./DEB` over it and proves it upgraded,
# finds no swift, runs --version,
# keygen (three rotations: ICU's DateFormatter), the bash completion, and `tunnel check`
# against a throwaway sshd and the OpenCode stand-in on this machine's loopback (a chroot
# shares the host's network). Needs fail, elapsed, measured, $as_root, $started, and
# debian-root.sh, root-mounts.sh and sshd.sh sourced.
package_check() {
  local deb=$1 version=$2 codename=$3 cache check_started
  cache=$(debian_minbase_root "$codename")
  check_work=$(mktemp -d /tmp/octunnel-check.XXXXXX)
  jail="$check_work/root"
  check_started=$(date +%s%N)
  $as_root cp -a "$cache" "$jail"
  $as_root cp /etc/resolv.conf "$jail/etc/resolv.conf"
  $as_root mkdir -p "$jail/proc"
  $as_root mount -t proc proc "$jail/proc"
  root_mounts+=("$jail/proc")
  $as_root cp "$deb" "$jail/tmp/"
  local work=$check_work
  # An older build installed first, as on a machine that had one: this package with the version
  # every build said before versions moved (0.1.0), its control's Version the only change (no
  # second compile). apt must upgrade it, never answer "already the newest version".
  local older_version=0.1.0 older="$work/octunnel_0.1.0_older.deb"
  dpkg --compare-versions "$version" gt "$older_version" || fail "the package's version $version does not sort after $older_version"
  dpkg-deb -R "$deb" "$work/older"
  sed -i "s/^Version: .*/Version: $older_version/" "$work/older/DEBIAN/control"
  dpkg-deb --root-owner-group -Zxz -z0 --build "$work/older" "$older" > /dev/null
  $as_root cp "$older" "$jail/tmp/"
  echo "== clean $codename root: apt-get install ./$(basename "$older"), then ./$(basename "$deb") over it"
  in_jail apt-get update -qq
  in_jail sh -c "cd /tmp && apt-get install -y -qq ./$(basename "$older")" > "$work/apt-older.log" 2>&1 ||
    { cat "$work/apt-older.log" >&2; fail "apt-get install of the older build failed in the clean root"; }
  in_jail dpkg-query -W -f='${Status} ${Version}\n' octunnel | grep -qx "install ok installed $older_version" ||
    fail "the older build ($older_version) is not installed in the clean root"
  in_jail sh -c "cd /tmp && apt-get install -y -qq ./$(basename "$deb")" > "$work/apt.log" 2>&1 ||
    { cat "$work/apt.log" >&2; fail "apt-get install failed in the clean root"; }
  grep -q "Unpacking octunnel ($version) over ($older_version)" "$work/apt.log" ||
    { cat "$work/apt.log" >&2; fail "apt-get install of $version did not upgrade $older_version"; }
  in_jail dpkg-query -W -f='${Status} ${Version}\n' octunnel | grep -qx "install ok installed $version" ||
    fail "octunnel $version is not installed in the clean root"
  echo "   $older_version upgraded to $version"

  ! in_jail sh -c 'command -v swift || command -v swiftc' > /dev/null || fail "the clean root has a swift"
  [ -z "$($as_root find "$jail" -xdev \( -name 'libswift*' -o -name 'libFoundation*' -o -name 'libdispatch*' \) -print -quit)" ] ||
    fail "the clean root has a Swift runtime library"
  echo "   installed; no swift and no Swift runtime library in the root"

  local shown startup public_line archived completed ssh_port standin_port
  shown=$(in_jail octunnel --version)
  [ "${shown%% *}" = "${version%+deb*}" ] || fail "octunnel --version printed \"$shown\", the package is $version"
  # Start-up time: the median of 31 runs of --version in the root, beside `true` run the same way.
  startup=$($as_root python3 - "$jail" <<'PYTHON'
import statistics, subprocess, sys, time
jail = sys.argv[1]
def median_ms(command):
    runs = []
    for _ in range(31):
        started = time.perf_counter()
        subprocess.run(["chroot", jail] + command, check=True, stdout=subprocess.DEVNULL)
        runs.append((time.perf_counter() - started) * 1000)
    return statistics.median(runs)
print(f"{median_ms(['/usr/bin/octunnel', '--version']):.1f} {median_ms(['/bin/true']):.1f}")
PYTHON
)
  echo "   octunnel --version: $shown, median ${startup% *} ms (chroot /bin/true: ${startup#* } ms)"
  measured version_ms "${startup% *}"
  measured true_ms "${startup#* }"

  public_line=$(in_jail octunnel keygen --comment clean-root 2> "$work/keygen.err") ||
    { cat "$work/keygen.err" >&2; fail "octunnel keygen failed in the clean root"; }
  [[ "$public_line" == "ssh-ed25519 AAAA"*" clean-root" ]] || fail "keygen printed \"$public_line\""
  echo "   octunnel keygen: ${public_line:0:40}…"
  # The trimmed ICU data at work: a third key in one directory archives the oldest under a name
  # DateFormatter makes (en_US_POSIX, UTC) through ICU; with no ICU data that run crashes.
  for _ in 1 2 3; do
    in_jail octunnel keygen --home /tmp/rotated --rotate > /dev/null 2> "$work/rotate.err" ||
      { cat "$work/rotate.err" >&2; fail "octunnel keygen --rotate failed in the clean root"; }
  done
  archived=$(in_jail sh -c 'cd /tmp/rotated && ls -d id_ed25519.prev-*' | grep -v '\.pub$' || true)
  [[ "$archived" =~ ^id_ed25519\.prev-[0-9]{8}T[0-9]{6}Z$ ]] || fail "keygen --rotate archived \"$archived\", not id_ed25519.prev-<UTC time>"
  echo "   octunnel keygen --rotate, three times: the oldest kept as $archived (ICU's DateFormatter)"

  completed=$(in_jail bash -c '. /usr/share/bash-completion/completions/octunnel
    COMP_LINE="octunnel tunnel ch"; COMP_POINT=${#COMP_LINE}; COMP_WORDS=(octunnel tunnel ch); COMP_CWORD=2
    _octunnel octunnel ch tunnel; printf "%s\n" "${COMPREPLY[@]}"')
  [ "$completed" = "check" ] || fail "bash completion of \`octunnel tunnel ch\` gave \"$completed\", not check"
  echo "   bash completion: octunnel tunnel ch<TAB> -> $completed"

  # The "VPS": sshd on this machine's loopback, authorizing the root's key; the stand-in plays OpenCode.
  ssh_port=$(free_port)
  ssh-keygen -q -t ed25519 -N '' -f "$work/vps_hostkey"
  printf '%s\n' "$public_line" > "$work/authorized_keys"
  write_sshd_config "$work/sshd_config" "$ssh_port" 127.0.0.1 "$work/vps_hostkey" "$work/authorized_keys" "PidFile $work/sshd.pid"
  /usr/sbin/sshd -D -f "$work/sshd_config" -E "$work/sshd.log" & check_pids+=($!)
  python3 scripts/opencode-standin.py --port 0 --quiet > "$work/standin.out" & check_pids+=($!)
  for _ in $(seq 100); do grep -q LISTENING "$work/standin.out" 2>/dev/null && break; sleep 0.1; done
  standin_port=$(awk '/LISTENING/ {print $2}' "$work/standin.out")
  [ -n "$standin_port" ] || fail "the OpenCode stand-in did not start"
  wait_port "$ssh_port" || fail "the check's sshd did not start: $(cat "$work/sshd.log")"
  in_jail octunnel tunnel check "$(id -un)@127.0.0.1:$ssh_port" --remote-port "$standin_port" > "$work/check.out" 2>&1 ||
    { cat "$work/check.out" "$work/sshd.log" >&2; fail "octunnel tunnel check failed in the clean root"; }
  echo "   octunnel tunnel check: $(tail -1 "$work/check.out")"
  echo "== check passed in $(( $(elapsed "$check_started") / 1000 )) s; package.sh --check took $(( $(elapsed "$started") / 1000 )) s in all"
  measured check_seconds "$(( $(elapsed "$check_started") / 1000 ))"
  measured total_seconds "$(( $(elapsed "$started") / 1000 ))"
  measured load_end "$(cut -d' ' -f1-3 /proc/loadavg | tr ' ' '/')"
}

# in_jail COMMAND...: runs COMMAND in the check's clean root as root, with a plain environment.
in_jail() {
  $as_root chroot "$jail" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 \
    DEBIAN_FRONTEND=noninteractive "$@"
}

# package.sh's EXIT trap, also on failure: the check's processes stopped, every mount (the
# build root's and the check's) undone, then the check's copy removed.
check_pids=()
check_work=""
package_cleanup() {
  stop_started "${check_pids[@]}"
  wait 2>/dev/null || true
  root_unmount_all || { [ -z "$check_work" ] || echo "left $check_work: something in it is still mounted" >&2; return; }
  [ -z "$check_work" ] || $as_root rm -rf "$check_work"
}
