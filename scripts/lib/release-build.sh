# Sourced by package.sh: the release build that goes into the package, with the Swift runtime
# and Foundation linked statically and Foundation's ICU data trimmed (below). Needs fail.
#   release_build SCRATCH [ROOT]   builds SCRATCH/release/octunnel (and, on this machine, the man
#                                  page's tool SCRATCH/release/generate-manual); with ROOT, inside that Debian
#                                  root through chroot (root_bind_toolchain and the package
#                                  directory at its own path must be mounted there), so that it
#                                  links that release's libssh2 and OpenSSL. The build's output
#                                  goes to SCRATCH/build.log. One build at a time per SCRATCH
#                                  (a lock): both packages' runs share .build-package, and the
#                                  second waits, then finds it built.
#
# Foundation's ICU data, made smaller. lib_FoundationICU.a carries all of ICU's data as one
# 34 MB symbol (icudt76_dat in icu_packaged_data.cpp.o), 8.06 MB of the package once xz-packed.
# It cannot be left out: any use of Foundation proper (FileHandle, NSLock, JSONSerialization,
# String(format:), ...) links NSString, hence CoreFoundation, hence ICU, and those objects are
# not split by function, so --gc-sections keeps it all (ld.lld --why-live=icudt76_dat shows
# the chain). So we link our own copy of that package without the locale data of locales other
# than root and English (scripts/lib/icu-data.py says what stays) and point icudt76_dat at it
# with --defsym, which the linker applies before it reads any archive: it then never pulls
# icu_packaged_data.cpp.o. 34.0 -> 14.8 MB in the binary; the .deb 15,072,540 -> 11,105,544
# bytes (main as of 4d2815d).
# (A plain object defining icudt76_dat does not do it: SwiftPM puts -Xlinker arguments after
# the archives, so the toolchain's copy is already in: "multiple definition of icudt76_dat".)
# The ICU data is the toolchain's, the same for every Debian release: it is trimmed and
# assembled on this machine, and the object is read from the same path inside a root.
release_build() {
  mkdir -p "$1"
  (
    flock 8
    release_build_locked "$@"
  ) 8> "$1/.release-build.lock"
}

release_build_locked() {
  local scratch=$1 root=${2:-} log="$1/build.log" icu_archive icu_dir icu_symbol data_symbol icu_object icu_symbols
  mkdir -p "$scratch"
  icu_archive="$(dirname "$(readlink -f "$(command -v swiftc)")")/../lib/swift_static/linux/lib_FoundationICU.a"
  icu_dir="$PWD/$scratch/icu"
  rm -rf "$icu_dir"
  mkdir -p "$icu_dir"
  (cd "$icu_dir" && ar x "$icu_archive" icu_packaged_data.cpp.o) ||
    fail "no icu_packaged_data.cpp.o in $icu_archive (a toolchain without Foundation's ICU data?)"
  icu_symbol=$(nm --defined-only "$icu_dir/icu_packaged_data.cpp.o" | awk '$2 == "R" && $3 ~ /^icudt[0-9]+_dat$/ { print $3 }')
  [ -n "$icu_symbol" ] || fail "no icudt*_dat symbol in icu_packaged_data.cpp.o"
  objcopy -O binary --only-section=.rodata "$icu_dir/icu_packaged_data.cpp.o" "$icu_dir/full.dat"
  python3 scripts/lib/icu-data.py "$icu_dir/full.dat" "$icu_dir/trimmed.dat" > "$icu_dir/trim.log" ||
    fail "trimming the ICU data failed: $(cat "$icu_dir/trim.log")"
  data_symbol=octunnel_icu_data
  printf '\t.section .rodata\n\t.balign 16\n\t.globl %s\n\t.hidden %s\n\t.type %s, @object\n%s:\n\t.incbin "%s"\n\t.size %s, . - %s\n\t.section .note.GNU-stack,"",@progbits\n' \
    "$data_symbol" "$data_symbol" "$data_symbol" "$data_symbol" "$icu_dir/trimmed.dat" "$data_symbol" "$data_symbol" > "$icu_dir/icudata.s"
  # Named by its content: a new name is a new link command, so SwiftPM relinks when the data changes.
  icu_object="$icu_dir/icudata-$(sha256sum "$icu_dir/trimmed.dat" | cut -c1-12).o"
  as -o "$icu_object" "$icu_dir/icudata.s" || fail "assembling the ICU data failed"
  echo "== ICU data: $(cat "$icu_dir/trim.log")"

  local build=(swift build -c release --static-swift-stdlib --disable-local-rpath --scratch-path "$scratch"
    -Xlinker --defsym -Xlinker "$icu_symbol=$data_symbol" -Xlinker "$icu_object" --product)
  if [ -z "$root" ]; then
    echo "== release build, Swift runtime and Foundation linked statically"
    "${build[@]}" octunnel > "$log" 2>&1 || { tail -30 "$log" >&2; fail "swift build failed (whole log: $log)"; }
    # The man page's tool (package.sh), swift-argument-parser's generate-manual, in the same
    # build with the same options: the build plan is the same (octunnel is not relinked) and it
    # reuses the ArgumentParser just compiled, where a build of its own (debug, in .build-manual)
    # compiled all of ArgumentParser again after this build, on CI's critical path.
    "${build[@]}" generate-manual >> "$log" 2>&1 || { tail -30 "$log" >&2; fail "building generate-manual failed (whole log: $log)"; }
  else
    echo "== release build in $root ($(. "$root/etc/os-release" && echo "$PRETTY_NAME"), libssh2 $(in_root "$root" pkg-config --modversion libssh2)), Swift runtime and Foundation linked statically"
    in_root "$root" "${build[@]}" octunnel > "$log" 2>&1 || { tail -30 "$log" >&2; fail "swift build in $root failed (whole log: $log)"; }
  fi
  # ICU reads the trimmed copy: one $icu_symbol, at the trimmed data's address.
  icu_symbols=$(nm -S --defined-only "$scratch/release/octunnel" | awk -v a="$icu_symbol" -v b="$data_symbol" '$NF == a || $NF == b')
  [ "$(awk -v a="$icu_symbol" '$NF == a' <<< "$icu_symbols" | wc -l)" = 1 ] &&
    [ "$(awk '{ print $1 }' <<< "$icu_symbols" | sort -u | wc -l)" = 1 ] &&
    [ "$(awk -v b="$data_symbol" '$NF == b { print $2 }' <<< "$icu_symbols")" = "$(printf '%016x' "$(stat -c %s "$icu_dir/trimmed.dat")")" ] ||
    fail "the binary does not read the trimmed ICU data: $(tr '\n' ';' <<< "$icu_symbols")"
}

# in_root ROOT COMMAND...: runs COMMAND in ROOT through chroot, in this directory (the same path
# there), with this machine's toolchain (bound at its own path, root_bind_toolchain) on PATH and
# a plain environment.
in_root() {
  local root=$1
  shift
  ${as_root:-} chroot "$root" /usr/bin/env -i PATH="$(dirname "$(readlink -f "$(command -v swiftc)")"):/usr/sbin:/usr/bin:/sbin:/bin" HOME=/root LANG=C.UTF-8 \
    OCTUNNEL_BUILD_VERSION="${OCTUNNEL_BUILD_VERSION:-}" sh -c 'cd "$1" && shift && exec "$@"' sh "$PWD" "$@"
}

# octunnel_in_trixie SCRATCH [host]: octunnel built in Debian 13's build root against its libssh2
# 1.11.1 (release_build there, into SCRATCH), or with `host` the packages' own build on this
# machine (release_build here; it runs there on 1.11.1), and SCRATCH/octunnel-in-root, a wrapper that runs it in
# that root with the caller's pid (sh, chroot and env exec), environment and directory. Mounts
# the root's /proc and /dev, the toolchain, the temp directory and this directory at their own
# paths (the caller's EXIT trap calls root_unmount_all); sets trixie_root and trixie_octunnel.
# Needs debian-root.sh and root-mounts.sh.
octunnel_in_trixie() {
  local scratch=$1 where=${2:-root} tmp
  trixie_root=$(debian_build_root trixie)
  tmp=$(dirname "$(mktemp -u)")
  root_mount_system "$trixie_root"
  root_bind_toolchain "$trixie_root"
  root_bind "$trixie_root" "$tmp"
  case "$PWD/" in "$tmp"/*) ;; *) root_bind "$trixie_root" "$PWD" ;; esac
  if [ "$where" = host ]; then release_build "$scratch" > /dev/null; else release_build "$scratch" "$trixie_root" > /dev/null; fi
  trixie_octunnel="$PWD/$scratch/octunnel-in-root"
  printf '#!/bin/sh\nexec /usr/sbin/chroot %s /usr/bin/env -C "$PWD" %s "$@"\n' "$trixie_root" "$PWD/$scratch/release/octunnel" > "$trixie_octunnel"
  chmod 0755 "$trixie_octunnel"
}
