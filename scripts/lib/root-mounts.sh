# Sourced by the scripts: what a chroot into a Debian root (debian-root.sh) needs mounted, and
# taking it all down again. Every mount is recorded; root_unmount_all undoes them, last first,
# and is meant for an EXIT trap (it runs on failure as well). Needs $as_root ("" or sudo).
#   root_mount_system ROOT        /proc and /dev
#   root_bind ROOT PATH [ro]      PATH of this machine at the same path inside ROOT
#   root_bind_toolchain ROOT      the Swift toolchain (/opt/swift), the package copies
#                                 (/opt/swift-packages) and git's system config that points
#                                 package URLs at them, at the same paths (for `swift build`)
#   root_unmount_all              every mount made here, last first (and root_lock's lock let go)
#   root_lock ROOT                waits until no other script has ROOT mounted, then holds that
#                                 until root_unmount_all (below)
root_mounts=()
root_lock_fd=""

# Two scripts must not have the same root mounted at once: package.sh's Debian 13 run and the
# Debian 13 leg (scripts/test.sh runs them side by side) both mount the trixie build root, and
# one's unmount would find the other's processes in it (busy) or take their mounts away. The
# lock is a file beside the root (flock), let go by root_unmount_all or when the script exits; a
# long-lived command started while it is held closes it ({root_lock_fd}>&-), so that a process
# left behind cannot hold it.
root_lock() {
  exec {root_lock_fd}> "$1.lock"
  flock "$root_lock_fd"
}

root_mount_system() {
  root_bind "$1" /dev
  $as_root mkdir -p "$1/proc"
  $as_root mount -t proc proc "$1/proc"
  root_mounts+=("$1/proc")
}

root_bind() {
  local root=$1 path=$2 target
  target="$root$path"
  $as_root mkdir -p "$target"
  $as_root mount --bind "$path" "$target"
  root_mounts+=("$target")
  [ "${3:-}" != ro ] || $as_root mount -o remount,bind,ro "$target"
}

root_bind_toolchain() {
  local root=$1 toolchain config
  toolchain=$(dirname "$(dirname "$(dirname "$(readlink -f "$(command -v swiftc)")")")")
  [ "$toolchain" = /opt/swift ] || echo "   note: the Swift toolchain is $toolchain, not /opt/swift" >&2
  root_bind "$root" "$toolchain" ro
  [ ! -d /opt/swift-packages ] || root_bind "$root" /opt/swift-packages ro
  # The file `git config --system` reads (its --show-origin), with what it says about URLs.
  config=$(git config --system --list --show-origin 2>/dev/null | sed -n 's/^file:\([^[:space:]]*\).*/\1/p' | head -1)
  [ -z "$config" ] || $as_root cp "$config" "$root/etc/gitconfig"
}

# A mount that is busy is tried again for up to 10 s: processes stopped a moment ago may still be
# exiting with a file open in it (sshd-session children, whose parent the caller waited for,
# keep sshd's log open).
root_unmount_all() {
  local index status=0 try
  for (( index = ${#root_mounts[@]} - 1; index >= 0; index-- )); do
    for try in $(seq 100); do
      $as_root umount "${root_mounts[index]}" 2> /dev/null && break
      [ "$try" -lt 100 ] && sleep 0.1 || { echo "still mounted: ${root_mounts[index]} ($($as_root umount "${root_mounts[index]}" 2>&1))" >&2; status=1; }
    done
  done
  root_mounts=()
  if [ -n "$root_lock_fd" ]; then
    exec {root_lock_fd}>&-
    root_lock_fd=""
  fi
  return $status
}
