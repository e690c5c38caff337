# Sourced by the scripts: Debian roots made once with debootstrap and kept in
# ${XDG_CACHE_HOME:-~/.cache}/octunnel/, each made in a partial directory renamed into place (so
# a root that is there is whole). Needs install_missing (packages.sh), $as_root ("" or sudo),
# fail and elapsed (the sourcing script's).
#   debian_codename 12|13             bookworm | trixie; anything else: one line, exit 64
#   debian_minbase_root CODENAME       a clean `debootstrap --variant=minbase` root (install checks)
#   debian_build_root CODENAME         a copy of it with what building octunnel with the host's Swift
#                                      toolchain and running the tests' sshd there need
# Each prints the root's path on stdout; what it did goes to stderr.

debian_cache_dir="${XDG_CACHE_HOME:-$HOME/.cache}/octunnel"
type measured > /dev/null 2>&1 || measured() { :; }

debian_codename() {
  case "$1" in
    12) echo bookworm ;;
    13) echo trixie ;;
    *) echo "unknown Debian release \"$1\": 12 (bookworm) or 13 (trixie)" >&2; exit 64 ;;
  esac
}

# What a Swift build needs in the root beside the toolchain bind-mounted at /opt/swift (its
# binaries link libstdc++, libcurl, libxml2, libsqlite3, libncurses and libuuid; swiftc links
# with binutils' ld.gold and the C runtime of libc6-dev and libgcc-N-dev), what octunnel links
# (libssh2, OpenSSL, through pkg-config), git (SwiftPM clones the packages' copies), and the
# tests' sshd and ssh; dpkg-dev for dpkg-shlibdeps (the package's Depends, as that release names
# its libraries).
debian_build_packages=(openssh-server openssh-client libssh2-1-dev libssl-dev pkg-config git
  binutils libc6-dev gcc g++ libcurl4-openssl-dev libxml2-dev libsqlite3-0 libncurses6 libuuid1
  zlib1g-dev tzdata procps dpkg-dev)

# Added after roots of the list above were made, so not part of a root's name: installed into a
# root that lacks them whenever it is used (debian_add_missing), and into a new root with the rest.
# libqrencode-dev: push setup's QR code (libcurl4-openssl-dev, the push's HTTPS client, is above
# already); ntfy: the real ntfy server the push tests run (Tests/OCTunnelTestSupport/NtfyServer.swift).
debian_added_packages=(libqrencode-dev ntfy)

# debian_add_missing ROOT: installs the debian_added_packages ROOT lacks, one apt-get at a time
# per root (a lock beside it).
debian_add_missing() {
  local root=$1 missing=() pkg
  for pkg in "${debian_added_packages[@]}"; do
    $as_root chroot "$root" dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  echo "== adding ${missing[*]} to $root" >&2
  (
    flock 9
    $as_root cp /etc/resolv.conf "$root/etc/resolv.conf"
    $as_root chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 \
      DEBIAN_FRONTEND=noninteractive sh -c 'apt-get update -qq && apt-get install -y -qq --no-install-recommends "$@" && apt-get clean' \
      sh "${missing[@]}" >&2
  ) 9> "$root.apt.lock" || fail "installing ${missing[*]} in $root failed"
}

# debian_make_root DESTINATION COMMAND...: runs COMMAND with a partial directory as its last
# argument and renames that into DESTINATION; another script that made DESTINATION meanwhile wins.
debian_make_root() {
  local destination=$1 partial="$1.partial.$$"
  shift
  $as_root rm -rf "$partial"
  mkdir -p "$(dirname "$destination")"
  "$@" "$partial" || { $as_root rm -rf "$partial"; return 1; }
  $as_root mv -T "$partial" "$destination" 2>/dev/null || $as_root rm -rf "$partial"
}

debian_debootstrap() {
  $as_root debootstrap --variant=minbase "$debian_codename_now" "$1" > "$debian_log" 2>&1 ||
    { tail -20 "$debian_log" >&2; return 1; }
}

debian_minbase_root() {
  local codename=$1 cache started
  cache="$debian_cache_dir/$codename-minbase"
  # package.sh's Debian 12 root has always been overridable.
  [ "$codename" != bookworm ] || cache="${OCTUNNEL_ROOT_CACHE:-$cache}"
  if [ ! -x "$cache/usr/bin/apt-get" ]; then
    install_missing debootstrap >&2
    echo "== debootstrap --variant=minbase $codename (once; kept in $cache)" >&2
    started=$(date +%s%N)
    debian_codename_now=$codename debian_log="$(dirname "$cache")/$codename-debootstrap.log"
    mkdir -p "$(dirname "$cache")"
    debian_make_root "$cache" debian_debootstrap || fail "debootstrap $codename failed (log: $debian_log)"
    [ -x "$cache/usr/bin/apt-get" ] || fail "no Debian root in $cache"
    echo "   in $(( $(elapsed "$started") / 1000 )) s" >&2
    measured debootstrap_seconds "$(( $(elapsed "$started") / 1000 ))"
  fi
  echo "$cache"
}

debian_install_build_packages() {
  $as_root cp -a "$debian_minbase_now" "$1" &&
    $as_root cp /etc/resolv.conf "$1/etc/resolv.conf" &&
    $as_root chroot "$1" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 \
      DEBIAN_FRONTEND=noninteractive sh -c 'apt-get update -qq &&
        apt-get install -y -qq --no-install-recommends "$@" && apt-get clean' sh "${debian_build_packages[@]}" "${debian_added_packages[@]}" \
      > "$debian_log" 2>&1 || { tail -20 "$debian_log" >&2; return 1; }
  # sshd's privilege-separation directory; the package's own host keys are never used.
  $as_root mkdir -p "$1/run/sshd"
}

debian_build_root() {
  local codename=$1 cache started
  # Named by its package list: another list is another root.
  cache="$debian_cache_dir/$codename-build-$(echo "${debian_build_packages[*]}" | sha256sum | cut -c1-8)"
  if [ ! -x "$cache/usr/sbin/sshd" ] || [ ! -x "$cache/usr/bin/git" ]; then
    debian_minbase_now=$(debian_minbase_root "$codename")
    echo "== $codename build root: apt-get install ${debian_build_packages[*]} (once; kept in $cache)" >&2
    started=$(date +%s%N)
    debian_log="$debian_cache_dir/$codename-build.log"
    debian_make_root "$cache" debian_install_build_packages || fail "installing the build packages in $codename failed (log: $debian_log)"
    echo "   in $(( $(elapsed "$started") / 1000 )) s" >&2
    measured build_root_seconds "$(( $(elapsed "$started") / 1000 ))"
  fi
  debian_add_missing "$cache"
  echo "$cache"
}
