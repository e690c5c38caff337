# Sourced by the scripts: a throwaway sshd's config, the same for demo and bench.
# write_sshd_config FILE PORT ADDRESS HOSTKEY AUTHORIZED_KEYS [LINE...]
# Key-only login (root allowed), TCP forwarding on, no PAM; each LINE is appended as is
# (sshd keeps the first value it reads for a keyword, so a LINE cannot override these).
write_sshd_config() {
  local file=$1 port=$2 address=$3 hostkey=$4 authorized=$5
  shift 5
  {
    printf '%s\n' "Port $port" "ListenAddress $address" "HostKey $hostkey" "AuthorizedKeysFile $authorized" \
      "PasswordAuthentication no" "KbdInteractiveAuthentication no" "UsePAM no" "StrictModes no" \
      "AllowTcpForwarding yes" "PermitRootLogin yes"
    [ $# -eq 0 ] || printf '%s\n' "$@"
  } > "$file"
  mkdir -p /run/sshd 2>/dev/null || true   # the privilege-separation directory
}
