#!/usr/bin/env bash
# Installs what octunnel needs (Debian), builds it, and runs the whole test suite; the whole suite
# (no arguments) then proves both packages (`scripts/package.sh --check`: the .deb built and
# installed and run in a clean Debian 12 root; `scripts/package.sh --debian 13 --check`: the same
# for Debian 13's, packaged and proven in Debian 13 roots, libssh2 1.11.1), and, beside the end of
# those, the Debian 13 leg (scripts/lib/debian-leg.sh): the sshd-backed tests that matter again,
# against Debian 13's sshd (OpenSSH 10) with octunnel on libssh2 1.11.1. Beside the suite, a short fuzz
# pass (scripts/lib/fuzz-smoke.sh): every libFuzzer target in Tests/Fuzz, built once, a few seconds
# each on its kept corpus; a crash fails the run. The package checks start with the build (their
# release build is the longest job), the fuzz pass with the suite. Both Debian 13 steps share
# one root, made once by debootstrap (~/.cache/octunnel); a whole run makes the missing roots
# in the background while the host suite builds (its log: .build-roots/log).
# Arguments go to `swift test` (e.g. --filter), and a run with arguments skips the package checks
# and the Debian 13 leg. `--debian 13 [ARGUMENTS]` runs only the Debian 13 leg (its own filter
# unless ARGUMENTS are given). Ends with where the time went, step by step.
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
. scripts/lib/fuzz-smoke.sh

steps=()
step_started=$(date +%s)
step_done() { steps+=("$1 $(( $(date +%s) - step_started )) s"); step_started=$(date +%s); }
roots=""
browser=""
lint=""
jobs_started=()
at_exit() {
  # The Debian 13 leg's mounts undone (debian-leg.sh), also when it fails.
  root_unmount_all || true
  # Should the build or the host suite fail, the roots are still waited for, never left half
  # made (debootstrap mounts /proc in its target while it works).
  [ -z "$roots" ] || wait "$roots" 2> /dev/null || true
  [ -z "$browser" ] || wait "$browser" 2> /dev/null || true
  [ -z "$lint" ] || wait "$lint" 2> /dev/null || true
  local job
  for job in "${jobs_started[@]}"; do wait "${job#*:}" 2> /dev/null || true; done
  echo "== time: ${steps[*]/%/;} load $(cut -d' ' -f1-3 /proc/loadavg)"
}
trap at_exit EXIT

install_missing "${OCTUNNEL_PACKAGES[@]}"
# Debian's chromium, for the tests that open a page in a real browser (OpenCodePairTests), and a
# desktop for the notification test (NotifyTests.desktop): about 1.5 min of download and
# unpacking on a new machine, in the background while the build runs.
mkdir -p .build-roots
install_missing "${OCTUNNEL_BROWSER[@]}" "${OCTUNNEL_DESKTOP[@]}" > .build-roots/browser.log 2>&1 &
browser=$!
# sshd needs its privilege-separation directory even for test servers.
[ -d /run/sshd ] || { [ "$(id -u)" -eq 0 ] && mkdir -p /run/sshd; } || true
step_done install

if ! $only_debian && [ $# -eq 0 ]; then
  # The package checks' clean roots and the Debian 13 build root: debootstrap and apt wait on the
  # network and the disk, the build below on the CPU.
  mkdir -p .build-roots
  rm -f .build-roots/roots.status
  # Its status goes to roots.status too, for the package checks that start before it ends.
  { made=0; debian_minbase_root bookworm && debian_build_root trixie || made=$?; echo "$made" > .build-roots/roots.status; exit "$made"; } > .build-roots/log 2>&1 &
  roots=$!
fi
start_job() { local name=$1; shift; "$@" > ".build-roots/$name.log" 2>&1 & jobs_started+=("$name:$!"); }
# The package checks wait for the roots (made in the background since the start), then build.
package_check() {
  until [ -s .build-roots/roots.status ]; do sleep 1; done
  [ "$(cat .build-roots/roots.status)" = 0 ] || { echo "making the Debian roots failed (.build-roots/log)"; return 1; }
  bash scripts/package.sh "$@"
}
# The two package checks start now, beside the debug build and then the host suite. One release
# build serves both packages and the Debian 13 leg (Debian 13's check waits for it under
# package.sh's lock, then packages and proves the same binary in its roots). That build's
# whole-module compile of OCTunnelCore is one long single-threaded job and was the critical path
# of the run: started after the debug build it took 403-420 s of CI's 732 s with two busy loops
# (.build-roots/deb12-package.log, "built in"), ending 229 s after the suite. Started here it
# takes one thread beside the debug build's two: on 2 cores shared with other work, one more
# runnable job is also a larger share of the machine for CI.
if ! $only_debian && [ $# -eq 0 ]; then
  start_job deb12-package package_check --check
  start_job deb13-package package_check --debian 13 --check
fi
# The formatter's lint (scripts/format.sh --check, ~6 s of CPU: swift format lint --strict, and no
# line in Sources/ over 140 columns) beside the build; a finding fails the run after the build.
# OCTUNNEL_FORMAT_LINT=off skips it.
format_lint=${OCTUNNEL_FORMAT_LINT:-on}
lint=""
if [ "$format_lint" = on ]; then
  bash scripts/format.sh --check > .build-roots/lint.log 2>&1 &
  lint=$!
fi
swift build --build-tests
step_done build
if [ -n "$lint" ]; then
  wait "$lint" || { cat .build-roots/lint.log >&2; fail "swift format lint: run scripts/format.sh, then commit (findings above)"; }
  lint=""
  step_done "lint (rest)"
fi
if [ -n "$browser" ]; then
  wait "$browser" || { cat .build-roots/browser.log >&2; fail "installing chromium and the desktop packages failed"; }
  browser=""
  step_done "browser+desktop (rest)"
fi
# At most 8 tests at once. Each test's body runs on threads of its own (the suites' .ownThreads),
# not on the two threads of Swift's cooperative pool, so a test's time limit counts its own
# work; this bound keeps the heavy tests (each starts sshd and octunnel) from all starting at
# once on 2 cores. Waiting for a place starts no clock. Swift Testing 6.3 reads this variable;
# a toolchain that does not runs every test at once, still correct, only more crowded.
export SWT_EXPERIMENTAL_MAXIMUM_PARALLELIZATION_WIDTH=${SWT_EXPERIMENTAL_MAXIMUM_PARALLELIZATION_WIDTH:-8}
# The fuzz pass (its own debug build of the core with the sanitizers, ~50 s alone, then each
# target for 2 s; OCTUNNEL_FUZZ_SECONDS=0 skips it) beside the suite, whose tests mostly wait on
# sockets and timers: after the suite, it was 124 s of CI's run with two busy loops.
if ! $only_debian && [ $# -eq 0 ] && [ "${OCTUNNEL_FUZZ_SECONDS:-2}" != 0 ]; then
  start_job fuzz fuzz_smoke "${OCTUNNEL_FUZZ_SECONDS:-2}"
fi
if ! $only_debian; then
  swift test --skip-build --parallel --num-workers 2 "$@"
  step_done tests
  [ $# -eq 0 ] || exit 0
  wait "$roots" || { cat .build-roots/log >&2; fail "making the Debian roots failed"; }
  roots=""
fi
# The Debian 13 leg starts right after the host suite, beside what is left of the package checks
# and the fuzz pass: it waits for their one release build (release_build's lock) and for Debian
# 13's package to be done with the build root they share (root_lock), not for the packages'
# compression and clean-root checks. After them, it was the last 58-64 s of CI's run.
debian_leg "$@"
step_done "Debian 13 leg"
if ! $only_debian; then
  # What is left of the package checks and the fuzz pass; each job's log is printed when it fails.
  failed_jobs=()
  for job in "${jobs_started[@]}"; do
    if wait "${job#*:}"; then
      [ "${job%%:*}" != fuzz ] || grep '^fuzz: ' ".build-roots/fuzz.log" || true
    else
      failed_jobs+=("${job%%:*}")
      echo "== ${job%%:*} failed; its log (.build-roots/${job%%:*}.log) ends:" >&2
      tail -n 40 ".build-roots/${job%%:*}.log" >&2
    fi
  done
  [ ${#failed_jobs[@]} -eq 0 ] || fail "failed: ${failed_jobs[*]}"
  step_done "fuzz + both packages (rest)"
fi
