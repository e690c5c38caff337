# Sourced by test.sh: the Debian 13 leg. The sshd-backed tests that matter run again, against
# Debian 13's sshd (OpenSSH 10: sshd, sshd-session, sshd-auth) and with the Debian 13 package's
# octunnel running in that root on its libssh2 1.11.1 (the packages' one release build,
# .build-package, made by `package.sh`; rebuilt here only if the sources changed since). The host's test
# runner drives them: OCTUNNEL_SSHD_ROOT makes SSHDServer start sshd through chroot, and
# OCTUNNEL_BINARY names a wrapper that runs that octunnel in the root. Tests that use the host's
# libssh2 in-process stay host-only. Mounted for the leg, undone on exit (also on failure):
# /proc, /dev, the toolchain (for the build), this directory, and the temp directory at their
# own paths (every test's files, sshd's config and log, keys, sockets, are visible at the same
# path inside the root). The caller's EXIT trap calls root_unmount_all (also on failure). The
# root is locked while mounted (root_lock): scripts/test.sh starts the leg right after the host
# suite, beside the rest of the package checks, and package.sh's Debian 13 run mounts the same
# root until its package's contents are made.
#   debian_leg [SWIFT TEST ARGUMENTS...]   (default: the filter below)

# handshake (tunnel check, host key, authentication), the forward, home up, the port reclaim
# program (sshd-session holds the port), roaming, re-keys, the hardened config and today's sshd;
# authorize, keys and the key's rotation in place (issue 47); the push against Debian 13's ntfy
# (issue 54: the root holds the server; the host suite cancels them, saying so, while no root is made).
debian_leg_filters=(
  'TunnelUpTests/(getThroughRestrictedKey|concurrentEcho|halfClose|changedHostKey|keyNotAuthorized|reconnects)\('
  'CheckAndHealthTests/(happyPath|hostKeyLayer|realReverseTunnel)\('
  'HomeUpTests/(endToEndHealth|bytesThroughBothEnds|ctrlC|listenLine)\('
  'PortReclaimTests/'
  'HeartbeatFallbackTests/'
  'RoamingTests/(move|homeMoves)\('
  'RekeyTests/(tunnelUpEcho|homeUpEcho|timeBasedRekeys)\('
  'HardenedServerTests/'
  'OpenSSH10Tests/'
  'AuthorizeTests/'
  'KeyRotationTests/'
  'StolenKeyTests/'
  'PushNtfyTests/'
  'PushCommandTests/'
  'HomePushTests/'
  'HomePushCommandTests/(homeUpPushes|tunnelUpUsesSavedPush)\('
)

debian_leg() {
  local root wrapper leg_started arguments=()
  leg_started=$(date +%s%N)
  root_lock "$(debian_build_root trixie)"
  octunnel_in_trixie .build-package host
  root=$trixie_root
  wrapper=$trixie_octunnel
  echo "== Debian 13 leg: $(. "$root/etc/os-release" && echo "$PRETTY_NAME"), $(in_root "$root" /usr/sbin/sshd -V 2>&1 | head -1), octunnel $("$wrapper" --version)"
  if [ $# -gt 0 ]; then arguments=("$@"); else
    local filter
    for filter in "${debian_leg_filters[@]}"; do arguments+=(--filter "$filter"); done
  fi
  OCTUNNEL_SSHD_ROOT=$root OCTUNNEL_BINARY=$wrapper swift test --skip-build --parallel --num-workers 2 "${arguments[@]}" {root_lock_fd}>&-
  root_unmount_all
  echo "== Debian 13 leg passed in $(( $(elapsed "$leg_started") / 1000 )) s"
}
