# Sourced by the scripts: installs the Debian packages named as arguments that are missing
# (apt-get update first), with sudo when not root.
install_missing() {
  local need=() pkg
  for pkg in "$@"; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || need+=("$pkg")
  done
  [ ${#need[@]} -eq 0 ] && return 0
  local sudo=""; [ "$(id -u)" -ne 0 ] && sudo="sudo"
  echo "Installing: ${need[*]}"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
}

# What octunnel needs to build and to run its tests and demo (iproute2: the network-cut test's
# namespaces and veth; busybox: the port-reclaim program run with busybox's sh and applets, as
# on Alpine).
OCTUNNEL_PACKAGES=(libssh2-1-dev libssl-dev openssh-client openssh-server python3 pkg-config iproute2 busybox)
