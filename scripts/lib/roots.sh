# Sourced by the scripts that work in Debian roots outside test.sh and package.sh (soak.sh with
# SOAK_DEB13, bulk-deb13.sh): fail and elapsed in the sourcing script's name, $as_root ("" or
# sudo), install_missing, and the root helpers: debian-root.sh, root-mounts.sh, release-build.sh.
. scripts/lib/packages.sh
fail() { echo "$(basename "$0"): $*" >&2; exit 1; }
elapsed() { echo "$(( ($(date +%s%N) - $1) / 1000000 ))"; }
as_root=""; [ "$(id -u)" -eq 0 ] || as_root=sudo
. scripts/lib/debian-root.sh
. scripts/lib/root-mounts.sh
. scripts/lib/release-build.sh
