#!/usr/bin/env bash
# Builds the Debian package for Debian 12 (bookworm) or, with --debian 13, Debian 13 (trixie):
# dist/octunnel_<version>_<arch>.deb or dist/octunnel_<version>+deb13_<arch>.deb (and no other
# file of the same release in dist/).
#   /usr/bin/octunnel: a release build with the Swift runtime and Foundation linked in
#   (--static-swift-stdlib), so the package needs no Swift; Depends names the C libraries it
#   links, as dpkg-shlibdeps finds them. The completions (bash, zsh, fish) and the man page are
#   generated from that very binary; the version is what it prints (OCTunnelVersion.current).
#   One release build for both (on this machine, Debian 12, in .build-package; the two packages'
#   runs take turns on it under a lock, and the second finds it built): libssh2 (.so.1) and
#   OpenSSL (.so.3) keep their ABI across the two releases and octunnel asks the running
#   libssh2 what it speaks (`libssh2_version`, the session's method preferences), so on Debian 13
#   the same binary runs on libssh2 1.11.1 with AES-GCM, encrypt-then-MAC and strict key
#   exchange. Debian 13's package is made and proven in a Debian 13 root (scripts/lib/debian-root.sh:
#   debootstrap once, cached in ~/.cache/octunnel) through chroot: the binary's libraries resolved
#   there (ldd), its Depends found there (dpkg-shlibdeps: libssh2-1t64, libssl3t64), --version
#   and the completions run there; this directory is bind-mounted at its own path
#   (scripts/lib/root-mounts.sh), every mount undone on exit, also on failure. (Until 2026-11-28
#   Debian 13's was a second release build, in the root: the longest job of CI's run.)
# --check: then proves it on a machine that never saw Swift: a clean minbase root of the same
#   release (debootstrap --variant=minbase, made once and kept in ~/.cache/octunnel/CODENAME-minbase,
#   Debian 12's overridable with $OCTUNNEL_ROOT_CACHE; each check works on a fresh copy of it),
#   where it runs `apt-get install ./octunnel_*.deb`, finds no swift, runs --version, keygen, the
#   bash completion, and `tunnel check` against a throwaway sshd and the OpenCode stand-in on this
#   machine's loopback (a chroot shares the host's network); scripts/lib/package-check.sh.
# PACKAGE_MEASUREMENTS=FILE: also writes what it measured there, one "key value" a line (bench.sh
#   reads it for docs/benchmarks.md).
set -euo pipefail
cd "$(dirname "$0")/.."
umask 022

usage() { echo "usage: $0 [--debian 12|13] [--check]" >&2; exit 64; }
check=false
release=12
while [ $# -gt 0 ]; do
  case "$1" in
    --check) check=true ;;
    --debian) [ $# -gt 1 ] || usage; release=$2; shift ;;
    *) usage ;;
  esac
  shift
done

. scripts/lib/packages.sh
. scripts/lib/sshd.sh
started=$(date +%s%N)
elapsed() { echo "$(( ($(date +%s%N) - $1) / 1000000 ))"; }
fail() { echo "package.sh: $*" >&2; exit 1; }
measured() { [ -z "${PACKAGE_MEASUREMENTS:-}" ] || echo "$1 $2" >> "$PACKAGE_MEASUREMENTS"; }
as_root=""; [ "$(id -u)" -eq 0 ] || as_root=sudo
. scripts/lib/debian-root.sh
. scripts/lib/root-mounts.sh
. scripts/lib/release-build.sh
. scripts/lib/package-check.sh
codename=$(debian_codename "$release")
trap package_cleanup EXIT
measured load_start "$(cut -d' ' -f1-3 /proc/loadavg | tr ' ' '/')"

install_missing "${OCTUNNEL_PACKAGES[@]}" dpkg-dev binutils xz-utils

# 1. The binary. Its own scratch path: `swift package generate-manual` or a plain
#    `swift build -c release` in .build would rebuild .build/release/octunnel without the
#    static flags, so nothing else writes where this one is built. Both releases' runs build
#    there (one at a time, the second a no-op); each stages its package in its own OUT.
# run_built COMMAND...: runs a command on the built binary where its package is made (Debian 13's
# in its root: its libssh2 and OpenSSL are the ones the binary resolves there).
scratch=.build-package
if [ "$release" = 12 ]; then
  out=.build-package
  suffix=""
  build_root=""
  run_built() { "$@"; }
else
  out=.build-package-deb$release
  suffix="+deb$release"
  build_root=$(debian_build_root "$codename")
  root_lock "$build_root"
  root_mount_system "$build_root"
  root_bind_toolchain "$build_root"
  root_bind "$build_root" "$PWD"
  run_built() { in_root "$build_root" "$@"; }
fi
mkdir -p "$out"
log="$out/build.log"
# The version the build stamps (Sources/VersionStamp runs scripts/version.sh): read from git
# here, and handed to a build root that cannot read this clone's history.
expected_version=$(sh scripts/version.sh)
export OCTUNNEL_BUILD_VERSION=$expected_version
release_build "$scratch"

stage="$out/deb"
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
  resolved=$(run_built ldd "$1")
  ! grep -Eqi '^lib(swift|_?Foundation|dispatch|BlocksRuntime|icu)' <<< "$needed" ||
    fail "$1 needs a Swift runtime library: $(grep -Ei '^lib(swift|_?Foundation|dispatch|BlocksRuntime|icu)' <<< "$needed" | tr '\n' ' ')"
  [ -z "$runpath" ] || fail "$1 has a library search path ($runpath)"
  ! grep -Eq 'not found|swift' <<< "$resolved" || fail "$1 resolves libraries outside the system: $resolved"
}
needs_no_swift "$bin"
version=$(run_built "$PWD/$bin" --version | cut -d" " -f1)
libssh2_version=$(run_built "$PWD/$bin" --version | sed -n 's/.*(libssh2 \([^)]*\)).*/\1/p')
arch=$(dpkg --print-architecture)
[[ "$version" =~ ^[0-9][A-Za-z0-9.+~]*$ ]] || fail "\`octunnel --version\` printed \"$version\", not a Debian version"
[ "$version" = "$expected_version" ] || fail "\`octunnel --version\` printed \"$version\", scripts/version.sh says \"$expected_version\""

# 2. Completions and the man page, from the packaged binary.
run_built "$PWD/$bin" --generate-completion-script bash > "$root/usr/share/bash-completion/completions/octunnel"
run_built "$PWD/$bin" --generate-completion-script zsh > "$root/usr/share/zsh/vendor-completions/_octunnel"
run_built "$PWD/$bin" --generate-completion-script fish > "$root/usr/share/fish/vendor_completions.d/octunnel.fish"

# The generate-manual tool of the swift-argument-parser this package resolved (what its
# GenerateManual plugin runs), built on this machine by release_build beside octunnel; it reads
# the packaged binary's --experimental-dump-help (Debian 13's through a wrapper that runs it in
# its root), so the page describes exactly what is installed.
echo "== man page (swift-argument-parser's generate-manual)"
manual_tool="$scratch/release/generate-manual"
[ -x "$manual_tool" ] || fail "no $manual_tool (release_build builds it)"
mkdir -p "$stage/man"
page_date=$(git log -1 --format=%cs 2>/dev/null || date -u +%F)
manual_subject="$bin"
if [ -n "$build_root" ]; then
  manual_subject="$stage/run/octunnel"
  mkdir -p "$stage/run"
  printf '#!/bin/sh\nexec %s chroot %s "%s" "$@"\n' "$as_root" "$build_root" "$PWD/$bin" > "$manual_subject"
  chmod 0755 "$manual_subject"
fi
"$manual_tool" "$manual_subject" --date "$page_date" --section 1 --output-directory "$stage/man"
# Every command and subcommand has its entry (".It Em NAME"); the page documents all of them.
missing=$(run_built "$PWD/$bin" --experimental-dump-help | python3 -c '
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
depends=$(cd "$stage" && run_built dpkg-shlibdeps -O -e root/usr/bin/octunnel 2>/dev/null | sed -n 's/^shlibs:Depends=//p')
[ -n "$depends" ] || fail "dpkg-shlibdeps found no dependencies"
# The build root's mounts (and its lock) are no longer needed: the Debian 13 leg, which mounts
# the same root, may start while this package is compressed and checked.
root_unmount_all

cat > "$root/DEBIAN/control" <<EOF
Package: octunnel
Version: $version$suffix
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
# Only this release's package is replaced: Debian 12's has no +deb suffix.
for old in dist/octunnel_*.deb; do
  case "$old" in *+deb[0-9]*_*) [ -z "$suffix" ] || rm -f "$old" ;; *) [ -n "$suffix" ] || rm -f "$old" ;; esac
done
deb="dist/octunnel_${version}${suffix}_${arch}.deb"
dpkg-deb --root-owner-group -Zxz -z9 -Sextreme --build "$root" "$deb" > /dev/null
size=$(stat -c %s "$deb")
echo "== $deb (libssh2 $libssh2_version): $size bytes ($(awk -v b="$size" 'BEGIN { printf "%.2f", b / 1000000 }') MB), Depends: $depends"
[ "$size" -lt 15000000 ] || echo "   warning: the package is 15 MB (15,000,000 bytes) or more (the goal in docs/benchmarks.md)" >&2
echo "   built in $(( $(elapsed "$started") / 1000 )) s (load: $(cut -d' ' -f1-3 /proc/loadavg))"
measured deb_bytes "$size"
measured build_seconds "$(( $(elapsed "$started") / 1000 ))"
measured load_built "$(cut -d' ' -f1-3 /proc/loadavg | tr ' ' '/')"

$check || exit 0

# ---------------------------------------------------------------------------------------------
# --check: install and run it in a clean root of the same release (scripts/lib/package-check.sh).
package_check "$deb" "$version$suffix" "$codename"
