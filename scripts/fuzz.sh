#!/usr/bin/env bash
# Runs every libFuzzer target of a -DLA_LIBFUZZER=ON build for a fixed time, two at a time, each
# from its committed seeds (tests/fuzz/corpus/TARGET*.bin) in a scratch corpus. A crash, leak or
# sanitizer report fails the run; the input that caused it is kept as BUILD/fuzz-artifacts/TARGET-*.
# Usage: scripts/fuzz.sh BUILD [SECONDS]   (default 60 seconds per target)
set -euo pipefail
build=${1:?usage: scripts/fuzz.sh BUILD [SECONDS]}
seconds=${2:-60}
src=$(cd "$(dirname "$0")/.." && pwd)
targets=(records date npy safetensors e5s1 csv cli writers shard blocks)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$build/fuzz-artifacts"
export ASAN_OPTIONS=halt_on_error=1:detect_leaks=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1

run() {
    local t=$1 bin="$build/tests/fuzz/fuzz_$1"
    [ -x "$bin" ] || { echo "fuzz: $bin is missing (configure with -DLA_LIBFUZZER=ON)" >&2; return 1; }
    mkdir -p "$work/$t"
    cp "$src"/tests/fuzz/corpus/"$t"*.bin "$work/$t/"
    if "$bin" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=8192 -close_fd_mask=1 \
        -artifact_prefix="$build/fuzz-artifacts/$t-" "$work/$t" >"$work/$t.log" 2>&1; then
        echo "fuzz_$t: $(grep -E '^Done [0-9]+ runs' "$work/$t.log" | tail -n 1), $(grep -oE 'cov: [0-9]+' "$work/$t.log" | tail -n 1)"
    else
        echo "fuzz_$t FAILED:" >&2
        tail -n 60 "$work/$t.log" >&2
        return 1
    fi
}

status=0
for ((i = 0; i < ${#targets[@]}; i += 2)); do
    pids=()
    for t in "${targets[@]:i:2}"; do
        run "$t" &
        pids+=($!)
    done
    for p in "${pids[@]}"; do wait "$p" || status=1; done
done
exit $status
