#!/usr/bin/env bash
# Installs what octunnel needs (Debian), builds it, and runs the whole test suite; the whole suite
# (no arguments) ends with the package's proof: `scripts/package.sh --check` builds the .deb and
# installs and runs it in a clean Debian 12 root. Arguments go to `swift test` (e.g. --filter),
# and a run with arguments skips the package check. Ends with where the time went, step by step.
set -euo pipefail
cd "$(dirname "$0")/.."

steps=()
step_started=$(date +%s)
step_done() { steps+=("$1 $(( $(date +%s) - step_started )) s"); step_started=$(date +%s); }
say_times() { echo "== time: ${steps[*]/%/;} load $(cut -d' ' -f1-3 /proc/loadavg)"; }
trap say_times EXIT

. scripts/lib/packages.sh
install_missing "${OCTUNNEL_PACKAGES[@]}"
# sshd needs its privilege-separation directory even for test servers.
[ -d /run/sshd ] || { [ "$(id -u)" -eq 0 ] && mkdir -p /run/sshd; } || true
step_done install

swift build --build-tests
step_done build
# At most 8 tests at once. Each test's body runs on threads of its own (the suites' .ownThreads),
# not on the two threads of Swift's cooperative pool, so a test's time limit counts its own
# work; this bound keeps the heavy tests (each starts sshd and octunnel) from all starting at
# once on 2 cores. Waiting for a place starts no clock. Swift Testing 6.3 reads this variable;
# a toolchain that does not runs every test at once, still correct, only more crowded.
export SWT_EXPERIMENTAL_MAXIMUM_PARALLELIZATION_WIDTH=${SWT_EXPERIMENTAL_MAXIMUM_PARALLELIZATION_WIDTH:-8}
swift test --skip-build --parallel --num-workers 2 "$@"
step_done tests
[ $# -gt 0 ] || { bash scripts/package.sh --check; step_done "package check"; }
