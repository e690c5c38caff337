#!/usr/bin/env bash
# Installs what octunnel needs (Debian), builds it, and runs the whole test suite; the whole suite
# (no arguments) then proves both packages (`scripts/package.sh --check`: the .deb built and
# installed and run in a clean Debian 12 root; `scripts/package.sh --debian 13 --check`: the same
# for Debian 13's, built in a Debian 13 root against libssh2 1.11.1), and ends with the Debian 13
# leg (scripts/lib/debian-leg.sh): the sshd-backed tests that matter again, against Debian 13's
# sshd (OpenSSH 10) with the octunnel built against libssh2 1.11.1. Both Debian 13 steps share
# one root, made once by debootstrap (~/.cache/octunnel); a whole run makes the missing roots
# in the background while the host suite builds (its log: .build-roots/log).
# Arguments go to `swift test` (e.g. --filter), and a run with arguments skips the package checks
# and the Debian 13 leg. `--debian 13 [ARGUMENTS]` runs only the Debian 13 leg (its own filter
# unless ARGUMENTS are given).
set -euo pipefail
cd "$(dirname "$0")/.."

only_debian=false
if [ "${1:-}" = --debian ]; then
  [ "${2:-}" = 13 ] || { echo "usage: $0 [--debian 13] [swift test arguments]" >&2; exit 64; }
  only_debian=true
  shift 2
fi

. scripts/lib/packages.sh
fail() { echo "test.sh: $*" >&2; exit 1; }
elapsed() { echo "$(( ($(date +%s%N) - $1) / 1000000 ))"; }
as_root=""; [ "$(id -u)" -eq 0 ] || as_root=sudo
. scripts/lib/debian-root.sh
. scripts/lib/root-mounts.sh
. scripts/lib/release-build.sh
. scripts/lib/debian-leg.sh

install_missing "${OCTUNNEL_PACKAGES[@]}"
# sshd needs its privilege-separation directory even for test servers.
[ -d /run/sshd ] || { [ "$(id -u)" -eq 0 ] && mkdir -p /run/sshd; } || true

roots=""
if ! $only_debian && [ $# -eq 0 ]; then
  # The package checks' clean roots and the Debian 13 build root: debootstrap and apt wait on the
  # network and the disk, the build below on the CPU.
  mkdir -p .build-roots
  { debian_minbase_root bookworm && debian_build_root trixie; } > .build-roots/log 2>&1 &
  roots=$!
  # Should the build or the host suite fail, the roots are still waited for, never left half
  # made (debootstrap mounts /proc in its target while it works).
  trap 'wait "$roots" 2> /dev/null || true' EXIT
fi
swift build --build-tests
if ! $only_debian; then
  swift test --skip-build --parallel --num-workers 2 "$@"
  [ $# -eq 0 ] || exit 0
  wait "$roots" || { cat .build-roots/log >&2; fail "making the Debian roots failed"; }
  bash scripts/package.sh --check
  bash scripts/package.sh --debian 13 --check
fi
debian_leg "$@"
