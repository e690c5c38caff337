# The start the bench scripts share (bench.sh, bench-rekey.sh, soak.sh, lib/issue56.sh): strict mode,
# the repository's root as the working directory, and the sshd and scratch helpers. Sourced first:
#   . "$(dirname "$0")/lib/bench-prelude.sh"
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
. scripts/lib/sshd.sh
. scripts/lib/scratch.sh
