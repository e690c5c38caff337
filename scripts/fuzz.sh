#!/usr/bin/env bash
# Builds the libFuzzer targets in Tests/Fuzz (with AddressSanitizer) and runs each for
# FUZZ_SECONDS (default 30) on a seed corpus made here. Not part of CI: run it by hand.
#   FUZZ_SECONDS=120 bash scripts/fuzz.sh                 all three targets
#   bash scripts/fuzz.sh FuzzTarget                       one target
#   FUZZ_OUT=/tmp/fz FUZZ_JOBS=2 bash scripts/fuzz.sh     keep corpora, two processes per target
# Crash inputs are kept in $FUZZ_OUT/<target>/crashes; exits 1 if any target crashed.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)

seconds=${FUZZ_SECONDS:-30}
jobs=${FUZZ_JOBS:-1}
out=${FUZZ_OUT:-$(mktemp -d "${TMPDIR:-/tmp}/octunnel-fuzz.XXXXXX")}
targets=("$@")
[ ${#targets[@]} -eq 0 ] && targets=(FuzzPrivateKey FuzzKnownHosts FuzzTarget)
mkdir -p "$out"

# libFuzzer and the sanitizer runtimes ship with the Swift toolchain (lib/clang/*/lib/linux);
# ssh-keygen makes the key seeds, the libraries are what the core links.
. scripts/lib/packages.sh
install_missing libssh2-1-dev libssl-dev openssh-client pkg-config

# Swift's own crash backtracer reads the stack behind ASan's back; let the sanitizer report.
export SWIFT_BACKTRACE=enable=no
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0:abort_on_error=0}

echo "== building ${targets[*]} (debug, -sanitize=fuzzer,address)"
# Tools version 5.4 in Tests/Fuzz/Package.swift: newer versions rename an executable's entry
# point and point `main` at it, which collides with libFuzzer's own main.
for target in "${targets[@]}"; do
  swift build --package-path Tests/Fuzz --scratch-path Tests/Fuzz/.build-fuzz -c debug \
    -Xswiftc -sanitize=fuzzer,address -Xswiftc -parse-as-library -Xswiftc -use-ld=lld \
    --product "$target" 2>&1 | grep -vE '^\[[0-9]+/[0-9]+\]' || true
  [ -x "Tests/Fuzz/.build-fuzz/debug/$target" ] || { echo "build of $target failed" >&2; exit 2; }
done
bin=$(cd Tests/Fuzz/.build-fuzz/debug && pwd)

# Seeds: the committed corpus plus real keys from ssh-keygen and octunnel-shaped inputs.
seed() {  # seed DIR NAME CONTENT...
  mkdir -p "$out/$1/corpus"; printf '%s' "${*:3}" > "$out/$1/corpus/$2"
}
for target in "${targets[@]}"; do
  mkdir -p "$out/$target/corpus" "$out/$target/crashes"
  [ -d "Tests/Fuzz/Corpus/$target" ] && cp -n Tests/Fuzz/Corpus/"$target"/* "$out/$target/corpus/" 2>/dev/null || true
done
keys=$(mktemp -d)
trap 'rm -rf "$keys"' EXIT
ssh-keygen -q -t ed25519 -N '' -C 'seed@fuzz' -f "$keys/plain"
ssh-keygen -q -t ed25519 -N 'secret' -f "$keys/encrypted"
ssh-keygen -q -t ecdsa -N '' -f "$keys/ecdsa"
cp "$keys/plain" "$out/FuzzPrivateKey/corpus/ssh-keygen-ed25519" 2>/dev/null || true
cp "$keys/encrypted" "$out/FuzzPrivateKey/corpus/ssh-keygen-encrypted" 2>/dev/null || true
cp "$keys/ecdsa" "$out/FuzzPrivateKey/corpus/ssh-keygen-ecdsa" 2>/dev/null || true
if [ -d "$out/FuzzPrivateKey" ]; then  # the bare openssh-key-v1 blobs too
  sed '1d;$d' "$keys/plain" | base64 -d > "$out/FuzzPrivateKey/corpus/blob-ed25519"
  sed '1d;$d' "$keys/encrypted" | base64 -d > "$out/FuzzPrivateKey/corpus/blob-encrypted"
  cp "$keys/plain.pub" "$out/FuzzPrivateKey/corpus/public-line"
fi
if [ -d "$out/FuzzKnownHosts" ]; then
  k=$(cut -d' ' -f1,2 "$keys/plain.pub"); e=$(cut -d' ' -f1,2 "$keys/ecdsa.pub")
  printf 'vps.example.com %s\n' "$k" > "$keys/kh"
  ssh-keygen -q -H -f "$keys/kh" 2>/dev/null
  hashed=$(cut -d' ' -f1 "$keys/kh")
  seed FuzzKnownHosts every-form "# comment
vps $k
[vps.example.com]:2222 $k
$hashed $k
vps,1.2.3.4,[::1]:2222 $e a comment
*.example.com,!bad.example.com $k
vp?,[10.0.0.?]:22 $k
@revoked vps $k
@cert-authority *.example.com $k
@unknown vps $k
vps ssh-ed25519 !!!not-base64
	  
vps ssh-rsa $(cut -d' ' -f2 "$keys/plain.pub")
[vps]:2222	$k	tab-separated"
  seed FuzzKnownHosts crlf-no-final-newline "vps $k"$'\r\n'"# x"$'\r\n'"other,vps $k"
fi
if [ -d "$out/FuzzTarget" ]; then
  for t in user@host:22 host '[::1]:2222' 'user@[2001:db8::1]:2222' 2001:db8::1 vps.example.com:65535 \
           deploy_bot-1.x@10.0.0.1 'a@b@c' '[vps]:2200' 'host:0'; do
    seed FuzzTarget "$(printf '%s' "$t" | md5sum | cut -c1-12)" "$t"
  done
fi

status=0
summary=()
for target in "${targets[@]}"; do
  dir="$out/$target"
  echo "== $target: ${seconds}s, corpus $(ls "$dir/corpus" | wc -l) inputs, log $dir/log"
  set +e
  if [ "$jobs" -gt 1 ]; then
    (cd "$dir" && "$bin/$target" -max_total_time="$seconds" -jobs="$jobs" -workers="$jobs" -dict="$root/Tests/Fuzz/Corpus/fuzz.dict" \
      -artifact_prefix="$dir/crashes/" -print_final_stats=1 corpus >"$dir/log" 2>&1)
    cat "$dir"/fuzz-*.log >> "$dir/log" 2>/dev/null
  else
    "$bin/$target" -max_total_time="$seconds" -dict="$root/Tests/Fuzz/Corpus/fuzz.dict" -artifact_prefix="$dir/crashes/" -print_final_stats=1 \
      "$dir/corpus" >"$dir/log" 2>&1
  fi
  rc=$?
  set -e
  runs=$( (grep -oE 'stat::number_of_executed_units: *[0-9]+' "$dir/log" || true) | awk '{s += $2} END {print s + 0}')
  cov=$( (grep -oE '(cov|ft): [0-9]+' "$dir/log" || true) | tail -2 | tr '\n' ' ')
  crashes=$(find "$dir/crashes" -type f | wc -l)
  if [ "$crashes" -gt 0 ]; then
    result="CRASH ($crashes input(s) in $dir/crashes)"
  elif [ "$rc" -ne 0 ]; then
    result="FAILED (libFuzzer exit $rc, see $dir/log)"
  else
    result="ok"
  fi
  if [ "$result" != ok ]; then
    status=1
    grep -m1 -E 'Precondition failed|Fatal error|ERROR: AddressSanitizer|ERROR: libFuzzer|error in line' "$dir/log" >&2 || true
  fi
  summary+=("$(printf '%-15s runs %-9s %s corpus %-5s %s' "$target" "$runs" "${cov:-cov ?}" "$(ls "$dir/corpus" | wc -l)" "$result")")
done

echo "== summary (${seconds}s per target; everything in $out)"
printf '%s\n' "${summary[@]}"
exit $status
