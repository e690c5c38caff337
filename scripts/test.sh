#!/usr/bin/env bash
# Installs what octunnel needs (Debian), builds it, and runs the whole test suite.
set -euo pipefail
cd "$(dirname "$0")/.."

need=()
for pkg in libssh2-1-dev libssl-dev openssh-client openssh-server python3 pkg-config; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || need+=("$pkg")
done
if [ ${#need[@]} -gt 0 ]; then
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  echo "Installing: ${need[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi
# sshd needs its privilege-separation directory even for test servers.
[ -d /run/sshd ] || { [ "$(id -u)" -eq 0 ] && mkdir -p /run/sshd; } || true

swift build --build-tests
swift test --skip-build --parallel --num-workers 2 "$@"
