#!/usr/bin/env bash
# Installs what octunnel needs (Debian), builds it, and runs the whole test suite; the whole suite
# (no arguments) ends with the package's proof: `scripts/package.sh --check` builds the .deb and
# installs and runs it in a clean Debian 12 root. Arguments go to `swift test` (e.g. --filter),
# and a run with arguments skips the package check.
set -euo pipefail
cd "$(dirname "$0")/.."

. scripts/lib/packages.sh
install_missing "${OCTUNNEL_PACKAGES[@]}"
# sshd needs its privilege-separation directory even for test servers.
[ -d /run/sshd ] || { [ "$(id -u)" -eq 0 ] && mkdir -p /run/sshd; } || true

swift build --build-tests
swift test --skip-build --parallel --num-workers 2 "$@"
[ $# -gt 0 ] || bash scripts/package.sh --check
