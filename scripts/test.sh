#!/usr/bin/env bash
# Installs what octunnel needs (Debian), builds it, and runs the whole test suite.
set -euo pipefail
cd "$(dirname "$0")/.."

. scripts/lib/packages.sh
install_missing "${OCTUNNEL_PACKAGES[@]}"
# sshd needs its privilege-separation directory even for test servers.
[ -d /run/sshd ] || { [ "$(id -u)" -eq 0 ] && mkdir -p /run/sshd; } || true

swift build --build-tests
swift test --skip-build --parallel --num-workers 2 "$@"
