#!/usr/bin/env bash
# Builds the Debian package dist/octunnel_<version>_<arch>.deb (and nothing else in dist/).
#   /usr/bin/octunnel: a release build with the Swift runtime and Foundation linked in
#   (--static-swift-stdlib), so the package needs no Swift; Depends names the C libraries it
#   links, as dpkg-shlibdeps finds them. The completions (bash, zsh, fish) and the man page are
#   generated from that very binary; the version is what it prints (OCTunnelVersion.current).
# --check: then proves it on a machine that never saw Swift: a clean Debian 12 root
#   (debootstrap --variant=minbase bookworm, made once and kept in $OCTUNNEL_ROOT_CACHE, default
#   ~/.cache/octunnel/bookworm-minbase; each check works on a fresh copy of it), where it runs
#   `apt-get install ./octunnel_*.deb`, finds no swift, runs --version, keygen, the bash
#   completion, and `tunnel check` against a throwaway sshd and the OpenCode stand-in on this
#   machine's loopback (a chroot shares the host's network).
# PACKAGE_MEASUREMENTS=FILE: also writes what it measured there, one "key value" a line (bench.sh
#   reads it for docs/benchmarks.md).
set -euo pipefail
cd "$(dirname "$0")/.."
umask 022

check=false
case "${1:-}" in
  --check) check=true ;;
  "") ;;
  *) echo "usage: $0 [--check]" >&2; exit 64 ;;
esac

. scripts/lib/packages.sh
started=$(date +%s%N)
elapsed() { echo "$(( ($(date +%s%N) - $1) / 1000000 ))"; }
fail() { echo "package.sh: $*" >&2; exit 1; }
measured() { [ -z "${PACKAGE_MEASUREMENTS:-}" ] || echo "$1 $2" >> "$PACKAGE_MEASUREMENTS"; }
measured load_start "$(cut -d' ' -f1-3 /proc/loadavg | tr ' ' '/')"

install_missing "${OCTUNNEL_PACKAGES[@]}" dpkg-dev binutils xz-utils

# 1. The binary. Its own scratch path: `swift package generate-manual` or a plain
#    `swift build -c release` in .build would rebuild .build/release/octunnel without the
#    static flags, so nothing else writes where this one is built.
scratch=.build-package
log="$scratch/build.log"
mkdir -p "$scratch"

# Foundation's ICU data, made smaller. lib_FoundationICU.a carries all of ICU's data as one
# 34 MB symbol (icudt76_dat in icu_packaged_data.cpp.o), 8.06 MB of the package once xz-packed.
# It cannot be left out: any use of Foundation proper (FileHandle, NSLock, JSONSerialization,
# String(format:), ...) links NSString, hence CoreFoundation, hence ICU, and those objects are
# not split by function, so --gc-sections keeps it all (ld.lld --why-live=icudt76_dat shows
# the chain). So we link our own copy of that package without the locale data of locales other
# than root and English (scripts/lib/icu-data.py says what stays) and point icudt76_dat at it
# with --defsym, which the linker applies before it reads any archive: it then never pulls
# icu_packaged_data.cpp.o. 34.0 -> 14.8 MB in the binary; the .deb 15,072,540 -> 11,105,544
# bytes (main as of 4d2815d).
# (A plain object defining icudt76_dat does not do it: SwiftPM puts -Xlinker arguments after
# the archives, so the toolchain's copy is already in: "multiple definition of icudt76_dat".)
icu_archive="$(dirname "$(readlink -f "$(command -v swiftc)")")/../lib/swift_static/linux/lib_FoundationICU.a"
icu_dir="$PWD/$scratch/icu"
rm -rf "$icu_dir"
mkdir -p "$icu_dir"
(cd "$icu_dir" && ar x "$icu_archive" icu_packaged_data.cpp.o) ||
  fail "no icu_packaged_data.cpp.o in $icu_archive (a toolchain without Foundation's ICU data?)"
icu_symbol=$(nm --defined-only "$icu_dir/icu_packaged_data.cpp.o" | awk '$2 == "R" && $3 ~ /^icudt[0-9]+_dat$/ { print $3 }')
[ -n "$icu_symbol" ] || fail "no icudt*_dat symbol in icu_packaged_data.cpp.o"
objcopy -O binary --only-section=.rodata "$icu_dir/icu_packaged_data.cpp.o" "$icu_dir/full.dat"
python3 scripts/lib/icu-data.py "$icu_dir/full.dat" "$icu_dir/trimmed.dat" > "$icu_dir/trim.log" ||
  fail "trimming the ICU data failed: $(cat "$icu_dir/trim.log")"
data_symbol=octunnel_icu_data
printf '\t.section .rodata\n\t.balign 16\n\t.globl %s\n\t.hidden %s\n\t.type %s, @object\n%s:\n\t.incbin "%s"\n\t.size %s, . - %s\n\t.section .note.GNU-stack,"",@progbits\n' \
  "$data_symbol" "$data_symbol" "$data_symbol" "$data_symbol" "$icu_dir/trimmed.dat" "$data_symbol" "$data_symbol" > "$icu_dir/icudata.s"
# Named by its content: a new name is a new link command, so SwiftPM relinks when the data changes.
icu_object="$icu_dir/icudata-$(sha256sum "$icu_dir/trimmed.dat" | cut -c1-12).o"
as -o "$icu_object" "$icu_dir/icudata.s" || fail "assembling the ICU data failed"
echo "== ICU data: $(cat "$icu_dir/trim.log")"

echo "== release build, Swift runtime and Foundation linked statically"
swift build -c release --static-swift-stdlib --disable-local-rpath --product octunnel --scratch-path "$scratch" \
  -Xlinker --defsym -Xlinker "$icu_symbol=$data_symbol" -Xlinker "$icu_object" > "$log" 2>&1 ||
  { tail -30 "$log" >&2; fail "swift build failed (whole log: $log)"; }
# ICU reads the trimmed copy: one $icu_symbol, at the trimmed data's address.
icu_symbols=$(nm -S --defined-only "$scratch/release/octunnel" | awk -v a="$icu_symbol" -v b="$data_symbol" '$NF == a || $NF == b')
[ "$(awk -v a="$icu_symbol" '$NF == a' <<< "$icu_symbols" | wc -l)" = 1 ] &&
  [ "$(awk '{ print $1 }' <<< "$icu_symbols" | sort -u | wc -l)" = 1 ] &&
  [ "$(awk -v b="$data_symbol" '$NF == b { print $2 }' <<< "$icu_symbols")" = "$(printf '%016x' "$(stat -c %s "$icu_dir/trimmed.dat")")" ] ||
  fail "the binary does not read the trimmed ICU data: $(tr '\n' ';' <<< "$icu_symbols")"

stage="$scratch/deb"
root="$stage/root"
rm -rf "$stage"
mkdir -p "$root/DEBIAN" "$root/usr/bin" "$root/usr/share/man/man1" "$root/usr/share/doc/octunnel" \
  "$root/usr/share/bash-completion/completions" "$root/usr/share/zsh/vendor-completions" \
  "$root/usr/share/fish/vendor_completions.d"
bin="$root/usr/bin/octunnel"
strip --strip-unneeded -o "$bin" "$scratch/release/octunnel"
chmod 0755 "$bin"

# needs_no_swift BINARY: fails unless BINARY loads with no Swift runtime, Foundation, dispatch
# or ICU library and no search path into a toolchain.
needs_no_swift() {
  local needed runpath resolved
  needed=$(readelf -d "$1" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
  runpath=$(readelf -d "$1" | sed -n 's/.*(R\(UN\)\{0,1\}PATH).*\[\(.*\)\]/\2/p')
  resolved=$(ldd "$1")
  ! grep -Eqi '^lib(swift|_?Foundation|dispatch|BlocksRuntime|icu)' <<< "$needed" ||
    fail "$1 needs a Swift runtime library: $(grep -Ei '^lib(swift|_?Foundation|dispatch|BlocksRuntime|icu)' <<< "$needed" | tr '\n' ' ')"
  [ -z "$runpath" ] || fail "$1 has a library search path ($runpath)"
  ! grep -Eq 'not found|swift' <<< "$resolved" || fail "$1 resolves libraries outside the system: $resolved"
}
needs_no_swift "$bin"
version=$("$bin" --version | cut -d" " -f1)
arch=$(dpkg --print-architecture)
[[ "$version" =~ ^[0-9][A-Za-z0-9.+~]*$ ]] || fail "\`octunnel --version\` printed \"$version\", not a Debian version"

# 2. Completions and the man page, from the packaged binary.
"$bin" --generate-completion-script bash > "$root/usr/share/bash-completion/completions/octunnel"
"$bin" --generate-completion-script zsh > "$root/usr/share/zsh/vendor-completions/_octunnel"
"$bin" --generate-completion-script fish > "$root/usr/share/fish/vendor_completions.d/octunnel.fish"

# The generate-manual tool of the swift-argument-parser this package resolved (what its
# GenerateManual plugin runs), built on its own; it reads the packaged binary's
# --experimental-dump-help, so the page describes exactly what is installed.
parser="$scratch/checkouts/swift-argument-parser"
echo "== man page (swift-argument-parser's generate-manual)"
swift build --package-path "$parser" --scratch-path .build-manual --product generate-manual >> "$log" 2>&1 ||
  { tail -30 "$log" >&2; fail "building generate-manual failed (whole log: $log)"; }
manual_tool="$(swift build --package-path "$parser" --scratch-path .build-manual --show-bin-path)/generate-manual"
mkdir -p "$stage/man"
page_date=$(git log -1 --format=%cs 2>/dev/null || date -u +%F)
"$manual_tool" "$bin" --date "$page_date" --section 1 --output-directory "$stage/man"
# Every command and subcommand has its entry (".It Em NAME"); the page documents all of them.
missing=$("$bin" --experimental-dump-help | python3 -c '
import json, sys
def names(command):
    for sub in command.get("subcommands") or []:
        yield sub["commandName"]
        yield from names(sub)
page = open(sys.argv[1]).read()
print(" ".join(sorted({n for n in names(json.load(sys.stdin)["command"]) if ".It Em " + n + "\n" not in page})))
' "$stage/man/octunnel.1")
[ -z "$missing" ] || fail "the man page has no entry for: $missing"
gzip -9n -c "$stage/man/octunnel.1" > "$root/usr/share/man/man1/octunnel.1.gz"
for doc in README.md docs/cli.md docs/troubleshooting.md docs/security.md; do
  gzip -9n -c "$doc" > "$root/usr/share/doc/octunnel/$(basename "$doc").gz"
done
needs_no_swift "$bin"   # still the binary built above: nothing rebuilt it

# 3. Depends, from what the binary links (dpkg-shlibdeps needs a debian/control beside it).
mkdir -p "$stage/debian"
printf 'Source: octunnel\n\nPackage: octunnel\nArchitecture: any\n' > "$stage/debian/control"
depends=$(cd "$stage" && dpkg-shlibdeps -O -e root/usr/bin/octunnel 2>/dev/null | sed -n 's/^shlibs:Depends=//p')
[ -n "$depends" ] || fail "dpkg-shlibdeps found no dependencies"

cat > "$root/DEBIAN/control" <<EOF
Package: octunnel
Version: $version
Architecture: $arch
Maintainer: octunnel maintainers <maintainers@octunnel.invalid>
Installed-Size: $(du -sk "$root/usr" | cut -f1)
Depends: $depends
Recommends: openssh-client
Section: net
Priority: optional
Description: reach a home OpenCode server through a VPS over SSH
 octunnel keeps a local port (127.0.0.1:4096) forwarded to an OpenCode server on a
 home machine, through a public VPS, over SSH (libssh2). "octunnel tunnel up" connects,
 trusts the VPS on first use, proves the path with a health test, and reconnects;
 "octunnel tunnel check" says which layer broke and how to fix it; "octunnel home up"
 runs the home machine's side. Keys are OpenSSH Ed25519 keys, trust is a known_hosts file.
EOF

mkdir -p dist
rm -f dist/octunnel_*.deb
deb="dist/octunnel_${version}_${arch}.deb"
dpkg-deb --root-owner-group -Zxz -z9 -Sextreme --build "$root" "$deb" > /dev/null
size=$(stat -c %s "$deb")
echo "== $deb: $size bytes ($(awk -v b="$size" 'BEGIN { printf "%.2f", b / 1000000 }') MB), Depends: $depends"
[ "$size" -lt 15000000 ] || echo "   warning: the package is 15 MB (15,000,000 bytes) or more (the goal in docs/benchmarks.md)" >&2
echo "   built in $(( $(elapsed "$started") / 1000 )) s (load: $(cut -d' ' -f1-3 /proc/loadavg))"
measured deb_bytes "$size"
measured build_seconds "$(( $(elapsed "$started") / 1000 ))"
measured load_built "$(cut -d' ' -f1-3 /proc/loadavg | tr ' ' '/')"

$check || exit 0

# ---------------------------------------------------------------------------------------------
# --check: install and run it in a clean Debian 12 root.
as_root=""; [ "$(id -u)" -eq 0 ] || as_root=sudo
. scripts/lib/sshd.sh
cache="${OCTUNNEL_ROOT_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/octunnel/bookworm-minbase}"
if [ ! -x "$cache/usr/bin/apt-get" ]; then
  install_missing debootstrap
  echo "== debootstrap --variant=minbase bookworm (once; kept in $cache)"
  boot_started=$(date +%s%N)
  partial="$cache.partial.$$"
  $as_root rm -rf "$partial"
  mkdir -p "$(dirname "$cache")"
  $as_root debootstrap --variant=minbase bookworm "$partial" > "$scratch/debootstrap.log" 2>&1 ||
    { tail -20 "$scratch/debootstrap.log" >&2; $as_root rm -rf "$partial"; fail "debootstrap failed"; }
  # Another check may have made it meanwhile: then that one is kept.
  $as_root mv -T "$partial" "$cache" 2>/dev/null || $as_root rm -rf "$partial"
  [ -x "$cache/usr/bin/apt-get" ] || fail "no Debian root in $cache"
  echo "   in $(( $(elapsed "$boot_started") / 1000 )) s"
  measured debootstrap_seconds "$(( $(elapsed "$boot_started") / 1000 ))"
fi

work=$(mktemp -d /tmp/octunnel-check.XXXXXX)
jail="$work/root"
pids=()
cleanup() {
  stop_started "${pids[@]}"
  wait 2>/dev/null || true
  if mountpoint -q "$jail/proc"; then $as_root umount "$jail/proc" || { echo "left $work: $jail/proc is still mounted" >&2; return; }; fi
  $as_root rm -rf "$work"
}
trap cleanup EXIT
check_started=$(date +%s%N)
$as_root cp -a "$cache" "$jail"
$as_root cp /etc/resolv.conf "$jail/etc/resolv.conf"
$as_root mount -t proc proc "$jail/proc"
$as_root cp "$deb" "$jail/tmp/"
# in_jail COMMAND...: runs COMMAND in the clean root as root, with a plain environment.
in_jail() {
  $as_root chroot "$jail" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 \
    DEBIAN_FRONTEND=noninteractive "$@"
}
echo "== clean bookworm root: apt-get install ./$(basename "$deb")"
in_jail apt-get update -qq
in_jail sh -c "cd /tmp && apt-get install -y -qq ./$(basename "$deb")" > "$work/apt.log" 2>&1 ||
  { cat "$work/apt.log" >&2; fail "apt-get install failed in the clean root"; }
in_jail dpkg-query -W -f='${Status} ${Version}\n' octunnel | grep -qx "install ok installed $version" ||
  fail "octunnel $version is not installed in the clean root"

! in_jail sh -c 'command -v swift || command -v swiftc' > /dev/null || fail "the clean root has a swift"
[ -z "$($as_root find "$jail" -xdev \( -name 'libswift*' -o -name 'libFoundation*' -o -name 'libdispatch*' \) -print -quit)" ] ||
  fail "the clean root has a Swift runtime library"
echo "   installed; no swift and no Swift runtime library in the root"

shown=$(in_jail octunnel --version | cut -d" " -f1)
[ "$shown" = "$version" ] || fail "octunnel --version printed \"$shown\", the package is $version"
# Start-up time: the median of 31 runs of --version in the root, beside `true` run the same way.
startup=$($as_root python3 - "$jail" <<'EOF'
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
EOF
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
/usr/sbin/sshd -D -f "$work/sshd_config" -E "$work/sshd.log" & pids+=($!)
python3 scripts/opencode-standin.py --port 0 --quiet > "$work/standin.out" & pids+=($!)
for _ in $(seq 100); do grep -q LISTENING "$work/standin.out" 2>/dev/null && break; sleep 0.1; done
standin_port=$(awk '/LISTENING/ {print $2}' "$work/standin.out")
[ -n "$standin_port" ] || fail "the OpenCode stand-in did not start"
for _ in $(seq 100); do (echo > "/dev/tcp/127.0.0.1/$ssh_port") 2>/dev/null && break; sleep 0.1; done
in_jail octunnel tunnel check "$(id -un)@127.0.0.1:$ssh_port" --remote-port "$standin_port" > "$work/check.out" 2>&1 ||
  { cat "$work/check.out" "$work/sshd.log" >&2; fail "octunnel tunnel check failed in the clean root"; }
echo "   octunnel tunnel check: $(tail -1 "$work/check.out")"
echo "== check passed in $(( $(elapsed "$check_started") / 1000 )) s; package.sh --check took $(( $(elapsed "$started") / 1000 )) s in all"
measured check_seconds "$(( $(elapsed "$check_started") / 1000 ))"
measured total_seconds "$(( $(elapsed "$started") / 1000 ))"
measured load_end "$(cut -d' ' -f1-3 /proc/loadavg | tr ' ' '/')"
