#!/usr/bin/env bash
# Builds the libFuzzer targets in Tests/Fuzz (with AddressSanitizer) and runs each for
# FUZZ_SECONDS (default 30) on a seed corpus made here. CI runs a short pass of its own
# (scripts/test.sh, on the kept corpora only); this is the longer run, by hand.
#   FUZZ_SECONDS=120 bash scripts/fuzz.sh                 every target
#   bash scripts/fuzz.sh FuzzTarget                       one target
#   FUZZ_OUT=/tmp/fz FUZZ_JOBS=2 bash scripts/fuzz.sh     keep corpora, two processes per target
#   FUZZ_CONFIG=release bash scripts/fuzz.sh              optimised build (FuzzEncryptedKey's KDF needs it)
# Each input must finish within 1 s (-timeout; FUZZ_TIMEOUT=S on a machine shared with builds, whose
# load stalls 4 ms inputs past 1 s) and the process stay under 256 MB (-rss_limit_mb).
# Crash, timeout and out-of-memory inputs are kept in $FUZZ_OUT/<target>/crashes; exits 1 if any.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)

seconds=${FUZZ_SECONDS:-30}
jobs=${FUZZ_JOBS:-1}
config=${FUZZ_CONFIG:-debug}
out=${FUZZ_OUT:-$(mktemp -d "${TMPDIR:-/tmp}/octunnel-fuzz.XXXXXX")}
targets=("$@")
[ ${#targets[@]} -eq 0 ] && targets=(FuzzPrivateKey FuzzKnownHosts FuzzTarget FuzzSSHConfig FuzzEncryptedKey FuzzPublicKey
  FuzzHealthAnswer FuzzEventStream FuzzOpenCodeAnswer FuzzSettings FuzzStatusReply FuzzSessionWatch FuzzServiceFiles FuzzForwardSpec FuzzPermissionList FuzzKeyLines FuzzPushReply)
mkdir -p "$out"

# libFuzzer and the sanitizer runtimes ship with the Swift toolchain (lib/clang/*/lib/linux);
# ssh-keygen makes the key seeds, the libraries are what the core links.
. scripts/lib/packages.sh
install_missing libssh2-1-dev libssl-dev openssh-client pkg-config

# Swift's own crash backtracer reads the stack behind ASan's back; let the sanitizer report.
export SWIFT_BACKTRACE=enable=no
# ASan keeps 256 MB of freed memory in quarantine by default, which alone would pass the RSS
# limit; 16 MB still catches a use after free of anything recent.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0:abort_on_error=0:quarantine_size_mb=16:malloc_context_size=5}

echo "== building ${targets[*]} ($config, -sanitize=fuzzer,address)"
# Tools version 5.4 in Tests/Fuzz/Package.swift: newer versions rename an executable's entry
# point and point `main` at it, which collides with libFuzzer's own main. One build for every
# target (no --product): the core is compiled once.
swift build --package-path Tests/Fuzz --scratch-path Tests/Fuzz/.build-fuzz -c "$config" \
  -Xswiftc -sanitize=fuzzer,address -Xswiftc -parse-as-library -Xswiftc -use-ld=lld \
  2>&1 | grep -vE '^\[[0-9]+/[0-9]+\]' || true
for target in "${targets[@]}"; do
  [ -x "Tests/Fuzz/.build-fuzz/$config/$target" ] || { echo "build of $target failed" >&2; exit 2; }
done
bin=$(cd "Tests/Fuzz/.build-fuzz/$config" && pwd)

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
if [ -d "$out/FuzzEncryptedKey" ]; then  # the target's passphrase is "fuzz" and its bound 1 round
  for rounds in 1 2; do
    ssh-keygen -q -t ed25519 -N fuzz -a "$rounds" -C "rounds $rounds" -f "$keys/fuzz-$rounds"
    cp "$keys/fuzz-$rounds" "$out/FuzzEncryptedKey/corpus/ssh-keygen-rounds-$rounds"
    sed '1d;$d' "$keys/fuzz-$rounds" | base64 -d > "$out/FuzzEncryptedKey/corpus/blob-rounds-$rounds"
  done
  cp "$keys/encrypted" "$out/FuzzEncryptedKey/corpus/ssh-keygen-16-rounds"
fi
if [ -d "$out/FuzzPublicKey" ]; then
  cp "$keys/plain.pub" "$keys/ecdsa.pub" "$out/FuzzPublicKey/corpus/"
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
      -timeout="${FUZZ_TIMEOUT:-1}" -rss_limit_mb=256 -artifact_prefix="$dir/crashes/" -print_final_stats=1 corpus >"$dir/log" 2>&1)
    cat "$dir"/fuzz-*.log >> "$dir/log" 2>/dev/null
  else
    "$bin/$target" -max_total_time="$seconds" -dict="$root/Tests/Fuzz/Corpus/fuzz.dict" -timeout="${FUZZ_TIMEOUT:-1}" -rss_limit_mb=256 \
      -artifact_prefix="$dir/crashes/" -print_final_stats=1 "$dir/corpus" >"$dir/log" 2>&1
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
  # The slowest input of the corpus, replayed one by one (libFuzzer times each file it is given).
  slowest=$(find "$dir/corpus" -type f -print0 | xargs -0 -r "$bin/$target" 2>&1 \
    | grep -oE 'in [0-9]+ ms' | awk '$2 > max {max = $2} END {print "slowest " max + 0 " ms"}')
  summary+=("$(printf '%-19s runs %-9s %s corpus %-5s %s %s' "$target" "$runs" "${cov:-cov ?}" "$(ls "$dir/corpus" | wc -l)" "$result" "$slowest")")
done

echo "== summary (${seconds}s per target; everything in $out)"
printf '%s\n' "${summary[@]}"
exit $status
