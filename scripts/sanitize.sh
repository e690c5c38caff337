#!/usr/bin/env bash
# Runs octunnel's tests under the sanitizers (issue 37): the engine and forwarding suites (both
# ends through a real sshd: re-keys, churn, cuts, roaming, backpressure) under ThreadSanitizer,
# and the whole host suite under AddressSanitizer. Each sanitizer has its own build folder
# (.build-tsan, .build-asan). Too slow for CI: run it by hand. See docs/sanitizers.md.
#   bash scripts/sanitize.sh                    both
#   bash scripts/sanitize.sh tsan               ThreadSanitizer only (asan: AddressSanitizer only)
#   bash scripts/sanitize.sh tsan --filter X    that sanitizer on the suites --filter names instead
#   SANITIZE_OUT=/tmp/san bash scripts/sanitize.sh    keep the logs and reports there
# Every process a test starts gets the sanitizer settings too (the harness adds them to a child's
# environment: OCTunnelTestSupport/SanitizerSettings.swift), so a report from a spawned
# `octunnel` lands in the report folder even when a test reads that child's stderr and drops it.
# Exits 1 if a test failed or any report was written, 2 if a build failed.
set -uo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)

kinds=(tsan asan)
if [ "${1:-}" = tsan ] || [ "${1:-}" = asan ]; then kinds=("$1"); shift; fi
filters=("$@")

# The suites that run the engine: octunnel at both ends through a real sshd (tunnel up, home up,
# re-keys, faults, cuts, roaming, backpressure, the pool, the stall watch, reconnects, status,
# the port reclaim), and the core's own session and stream tests.
engine_suites=(
  octunnelTests.TunnelUpTests octunnelTests.ReadinessTests octunnelTests.OpenOrderTests
  octunnelTests.HomeUpTests octunnelTests.RekeyTests octunnelTests.FaultTests
  octunnelTests.StreamSoakTests octunnelTests.NetworkCutTests octunnelTests.RoamingTests
  octunnelTests.BackpressureTests octunnelTests.ChannelPoolTests octunnelTests.StallWatchTests
  octunnelTests.HomeNetworkTests octunnelTests.ReconnectCommandTests octunnelTests.StatusCommandTests
  octunnelTests.HostilePeerTests octunnelTests.PortReclaimTests
  OCTunnelCoreTests.SessionFreeTests OCTunnelCoreTests.BatchedSocketIOTests
  OCTunnelCoreTests.OwnershipTests OCTunnelCoreTests.StreamStallTests
  OCTunnelCoreTests.StreamTableTests OCTunnelCoreTests.HarnessTests
)

out=${SANITIZE_OUT:-$(mktemp -d "${TMPDIR:-/tmp}/octunnel-sanitize.XXXXXX")}
mkdir -p "$out"
started=$(date +%s)
summary=()
status=0

# swift-backtrace would catch a sanitizer's abort and hold the output pipe; let the sanitizer report.
export SWIFT_BACKTRACE=enable=no
export SWT_EXPERIMENTAL_MAXIMUM_PARALLELIZATION_WIDTH=${SWT_EXPERIMENTAL_MAXIMUM_PARALLELIZATION_WIDTH:-8}

# count_reports DIR: "N (kind: n, ...)" for the report files a run left in DIR.
count_reports() {
  local files
  files=$(find "$1" -type f -name 'report.*' 2>/dev/null)
  [ -n "$files" ] || { echo 0; return; }
  local count
  count=$(wc -l <<< "$files")
  # One header line per report: "WARNING: ThreadSanitizer: data race (pid=1)" or
  # "ERROR: AddressSanitizer: heap-use-after-free on address ...".
  # shellcheck disable=SC2086
  grep -hoE '(WARNING|ERROR): [A-Za-z]+Sanitizer: [A-Za-z-]+( [A-Za-z-]+)*' $files \
    | sed -E 's/^(WARNING|ERROR): //; s/ on( address)?$//' | sort | uniq -c | sort -rn \
    | awk 'BEGIN { total = 0; list = "" } { total += $1; n = $1; $1 = ""; sub(/^ /, ""); list = list (list == "" ? "" : ", ") $0 ": " n }
           END { print total " (" list ")" }' | sed -E "s/^0 \(\)$/0 recognized, in $count files: read them/"
}

run_kind() {  # run_kind tsan|asan
  local kind=$1 sanitizer scratch reports log step_start args=() options
  case $kind in
    tsan) sanitizer=thread ;;
    asan) sanitizer=address ;;
  esac
  scratch=.build-$kind
  reports="$out/$kind-reports"
  log="$out/$kind-test.log"
  rm -rf "$reports"; mkdir -p "$reports"
  step_start=$(date +%s)

  echo "== $kind: building (swift build --build-tests --sanitize=$sanitizer --scratch-path $scratch)"
  if ! nice swift build --build-tests --sanitize="$sanitizer" --scratch-path "$scratch" > "$out/$kind-build.log" 2>&1; then
    tail -30 "$out/$kind-build.log" >&2
    summary+=("$kind: build failed ($out/$kind-build.log)")
    return 2
  fi
  local built=$(( $(date +%s) - step_start ))

  # file:line in the reports' stacks (the children's PATH is /usr/bin:/bin).
  local symbolizer
  symbolizer=$(command -v llvm-symbolizer || true)
  [ -x "$(dirname "$(command -v swift)")/llvm-symbolizer" ] && symbolizer="$(dirname "$(command -v swift)")/llvm-symbolizer"
  # Reports go to files (log_path: one per process, report.PID), never only to a stderr a test
  # may swallow; a process with reports exits non-zero (exitcode), and the count below fails
  # the run whatever the tests said.
  case $kind in
    tsan)
      options="log_path=$reports/report halt_on_error=0 exitcode=66 second_deadlock_stack=1 history_size=4${symbolizer:+ external_symbolizer_path=$symbolizer}"
      [ -f scripts/lib/tsan.supp ] && options="$options suppressions=$root/scripts/lib/tsan.supp"
      export TSAN_OPTIONS="$options"
      if [ ${#filters[@]} -eq 0 ]; then
        for suite in "${engine_suites[@]}"; do args+=(--filter "^${suite//./\\.}/"); done
      fi ;;
    asan)
      # Leaks are not looked for here (the Swift runtime's caches and libssh2 1.10's known
      # per-key-exchange losses would drown the rest; docs/benchmarks.md measures memory).
      # A child's peak RSS is then mostly ASan's: HostilePeerTests sees the binary carries ASan
      # and allows 3x (OCTunnelTestSupport/SanitizerSettings.swift).
      options="log_path=$reports/report halt_on_error=1 abort_on_error=0 detect_leaks=0 detect_stack_use_after_return=1${symbolizer:+ external_symbolizer_path=$symbolizer}"
      [ -f scripts/lib/asan.supp ] && options="$options suppressions=$root/scripts/lib/asan.supp"
      export ASAN_OPTIONS="$options" ;;
  esac
  args+=("${filters[@]}")

  echo "== $kind: testing (${#args[@]} filter arguments; log $log)"
  nice swift test --skip-build --sanitize="$sanitizer" --scratch-path "$scratch" --parallel --num-workers 2 "${args[@]}" > "$log" 2>&1
  local rc=$?
  unset TSAN_OPTIONS ASAN_OPTIONS
  local took=$(( $(date +%s) - step_start - built ))

  # Swift Testing's last line: "✔ Test run with N tests in M suites passed after S seconds." or
  # "✘ Test run with N tests in M suites failed after S seconds with K issues."; one "✔ Test NAME
  # ... passed after" or "✘ Test NAME ... failed after" line per test that ended. No last line:
  # the test process itself died (an AddressSanitizer report ends the process that has it).
  local result passed failed total
  result=$(grep -aE 'Test run with [0-9]+ tests?' "$log" | tail -1)
  total=$(sed -nE 's/.*Test run with ([0-9]+) tests?.*/\1/p' <<< "$result")
  passed=$(grep -aE '^✔ Test .* passed after' "$log" | grep -acv 'Test run with' || true)
  failed=$(grep -aE '^✘ Test .* failed after' "$log" | grep -acv 'Test run with' || true)
  [ -n "$result" ] || result="no end line: the test process died after $(( passed + failed )) tests ended (its tail: $log)"
  local found
  found=$(count_reports "$reports")
  # A report some process printed where the script did not send it (a child given no settings).
  local stray
  stray=$(grep -acE '(WARNING|ERROR): [A-Za-z]+Sanitizer:' "$log" || true)
  summary+=("$kind: ${total:-?} tests, $passed passed, $failed failed, $(( ${total:-0} - passed - failed < 0 ? 0 : ${total:-0} - passed - failed )) skipped (swift test exit $rc); reports: $found${stray:+, in the test output: $stray}; build ${built} s, tests ${took} s")
  summary+=("  $result")
  # Any report file fails the run, even one whose header the count above did not recognize.
  if [ "$rc" -ne 0 ] || [ "$found" != 0 ] || [ "${stray:-0}" != 0 ]; then return 1; fi
}

for kind in "${kinds[@]}"; do
  run_kind "$kind"
  rc=$?
  [ $rc -gt $status ] && status=$rc
done

echo
echo "== sanitize.sh summary ($(date -u +%Y-%m-%dT%H:%M:%SZ), $(( $(date +%s) - started )) s in all; logs and reports in $out)"
printf '%s\n' "${summary[@]}"
for kind in "${kinds[@]}"; do
  files=$(find "$out/$kind-reports" -type f 2>/dev/null | wc -l)
  [ "$files" -eq 0 ] || echo "$kind: $files report files in $out/$kind-reports"
done
exit $status
