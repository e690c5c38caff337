#!/usr/bin/env bash
# Formats the Swift sources (Sources, Tests, Package.swift) with the toolchain's `swift format` and
# the checked-in .swift-format: 4 spaces, 120 columns, the code's own line breaks kept where they fit.
#   scripts/format.sh           formats every file in place
#   scripts/format.sh --check   changes nothing; fails (exit 1) on any finding of
#                               `swift format lint --strict` (CI's lint step, scripts/test.sh)
#                               or any line in Sources/ over 140 columns, or any function there over
#                               80 lines (scripts/long-functions.py)
# Rules off in .swift-format, which the tree does not follow and the formatter cannot fix:
# AlwaysUseLowerCamelCase (System/'s `system_poll`-style names for the libc call they wrap),
# NoBlockComments (`0 /* NETLINK_ROUTE */` names a C constant in place), ReplaceForEachWithForLoop.
# Lines the formatter cannot break (string literals, end-of-line comments it will not move) stay
# long: `--check` fails on any such line in Sources/ (naming it) and notes how many Tests/ has.
set -euo pipefail
cd "$(dirname "$0")/.."
paths=(Sources Tests Package.swift)
command -v swift > /dev/null || { echo "format.sh: no swift on PATH" >&2; exit 69; }
swift format --version > /dev/null 2>&1 || { echo "format.sh: this toolchain has no \`swift format\` (Swift 6 ships it)" >&2; exit 69; }
case "${1:-}" in
  --check)
    swift format lint --strict --parallel -r "${paths[@]}"
    # Sources/ has none: a literal or comment the formatter cannot break is split by hand (pieces joined with +).
    long=$(find Sources -name '*.swift' -not -path '*/.*' -exec awk 'length > 140 { print FILENAME ":" FNR }' {} +)
    if [ -n "$long" ]; then
      echo "$long" | sed 's/$/: over 140 columns (split the string literal, or move the comment above its line)/' >&2
      exit 1
    fi
    # No function in Sources/ over 80 lines (issue 57): split it into well-named pieces.
    python3 scripts/long-functions.py Sources 80 >&2 || { echo "format.sh: a function in Sources/ is over 80 lines (above)" >&2; exit 1; }
    long=$(find Tests -name '*.swift' -not -path '*/.*' -exec awk 'length > 140' {} + | wc -l)
    [ "$long" = 0 ] || echo "format.sh: note: $long lines in Tests/ over 140 columns (string literals or comments the formatter cannot break)" >&2
    ;;
  "") swift format format --in-place --parallel -r "${paths[@]}" ;;
  *) echo "usage: $0 [--check]" >&2; exit 64 ;;
esac
