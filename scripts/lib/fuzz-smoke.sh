# fuzz_smoke SECONDS: CI's short fuzz pass (scripts/test.sh, whole-suite runs). One debug build of
# every libFuzzer target in Tests/Fuzz (the core compiled once, with -sanitize=fuzzer,address),
# then each target for SECONDS on a copy of its kept corpus (Tests/Fuzz/Corpus/<target>, never
# written to) with the dictionary, each input bounded to 10 s and the process to 256 MB. Any crash,
# timeout or out-of-memory input fails the step; it is left in $FUZZ_SMOKE_OUT/<target>/ and
# its first lines of report are printed. The long runs are scripts/fuzz.sh's (docs/fuzzing.md),
# with the 1 s bound: here a loaded machine (~20 on 2 cores) stalled inputs that take 10-100 ms
# past 1 s a few times an hour, and CI must not fail on the machine; a hang still fails it.
#
# Debug, not release, since 2026-11-26: CI with two busy loops had grown to 924 s, and the release
# build was 98 s of the step's 150 (a debug one about half). The kept corpora are small, so even
# FuzzEncryptedKey's slow KDF (a debug ASan round is ~0.5 s) replays its seeds well within the
# 10 s bound; the long runs stay release (scripts/fuzz.sh, FUZZ_CONFIG=release).
fuzz_smoke() {
  local seconds=$1 config=${FUZZ_SMOKE_CONFIG:-debug}
  local out=${FUZZ_SMOKE_OUT:-$(mktemp -d "${TMPDIR:-/tmp}/octunnel-fuzz-smoke.XXXXXX")}
  local scratch=Tests/Fuzz/.build-fuzz
  swift build --package-path Tests/Fuzz --scratch-path "$scratch" -c "$config" \
    -Xswiftc -sanitize=fuzzer,address -Xswiftc -parse-as-library -Xswiftc -use-ld=lld \
    2>&1 | grep -vE '^\[[0-9]+/[0-9]+\]' || true
  local failed=() target
  for target in $(ls Tests/Fuzz/Corpus | grep '^Fuzz'); do
    [ -x "$scratch/$config/$target" ] || { echo "fuzz: $target did not build" >&2; return 1; }
    mkdir -p "$out/$target/corpus" "$out/$target/crashes"
    cp Tests/Fuzz/Corpus/"$target"/* "$out/$target/corpus/"
    if ! SWIFT_BACKTRACE=enable=no ASAN_OPTIONS=detect_leaks=0:quarantine_size_mb=16:malloc_context_size=5 \
        "$scratch/$config/$target" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=256 \
        -dict=Tests/Fuzz/Corpus/fuzz.dict -artifact_prefix="$out/$target/crashes/" -print_final_stats=1 \
        "$out/$target/corpus" > "$out/$target/log" 2>&1; then
      failed+=("$target")
      grep -m3 -E 'Precondition failed|Fatal error|ERROR: (AddressSanitizer|libFuzzer)|Test unit written' "$out/$target/log" >&2 || true
    fi
    printf 'fuzz: %-19s %s runs\n' "$target" \
      "$( (grep -oE 'stat::number_of_executed_units: *[0-9]+' "$out/$target/log" || echo 0) | grep -oE '[0-9]+$')"
  done
  [ ${#failed[@]} -eq 0 ] || { echo "fuzz: ${failed[*]} failed; inputs and logs in $out" >&2; return 1; }
  rm -rf "$out"
}
