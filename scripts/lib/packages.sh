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
  # One install at a time: scripts/test.sh installs chromium in the background while the Debian
  # roots' job may install debootstrap, and two apt-gets at once fail on dpkg's lock.
  (
    flock 9
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
  ) 9> "${TMPDIR:-/tmp}/octunnel-apt.lock"
  # sslh's package enables a service (standalone, its debconf default) whose stock config
  # (`--listen <change-me>:443`) cannot start; disabled and stopped all the same, so that
  # installing it never leaves a listener on this machine (the tests run their own).
  if [[ " ${need[*]} " == *" sslh "* ]]; then
    { command -v systemctl >/dev/null && $sudo systemctl disable --now sslh; } >/dev/null 2>&1 || true
    { command -v update-rc.d >/dev/null && $sudo update-rc.d sslh disable; } >/dev/null 2>&1 || true
  fi
}

# What octunnel needs to build and to run its tests and demo (iproute2: the network-cut test's
# namespaces and veth; busybox: the port-reclaim program run with busybox's sh and applets, as
# on Alpine; sslh: the port reclaim behind a relay in front of sshd, PortReclaimRelayTests;
# libcurl4-openssl-dev: the push's HTTPS client, Push/Curl; libqrencode-dev: push setup's QR code;
# curl: the scripted phone of the push tests).
OCTUNNEL_PACKAGES=(libssh2-1-dev libssl-dev openssh-client openssh-server python3 pkg-config iproute2 busybox sslh
  libcurl4-openssl-dev libqrencode-dev curl)
# The real browser of the tests that open a page, and the desktop of the notification test (a
# session bus, an X server, a notification server that prints what it shows, notify-send):
# scripts/test.sh installs them beside the build.
OCTUNNEL_BROWSER=(chromium)
OCTUNNEL_DESKTOP=(dbus-daemon xvfb dunst libnotify-bin)
