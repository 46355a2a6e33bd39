#!/usr/bin/env bash
# Runs leakaudit's near benchmark and the Python peers on one generated corpus and prints ratios.
#   bench/peers/run_peers.sh BUILD_DIR [DEV_ROWS TEST_ROWS]
# Needs bench/peers/setup.sh first. Not part of CI.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
build="${1:?usage: run_peers.sh BUILD_DIR [DEV_ROWS TEST_ROWS]}"
ndev="${2:-10000}"
ntest="${3:-1000}"
out="$(mktemp -d)"
# One thread each, enforced: rensa's bulk API runs on more than one thread even with
# RAYON_NUM_THREADS=1 (CPU time / wall time about 1.5 on 2 cores), so both sides run pinned to one CPU.
pin=()
if command -v taskset >/dev/null; then
  pin=(taskset -c "${LA_BENCH_CPU:-0}")
  echo "pinned to CPU ${LA_BENCH_CPU:-0} with taskset"
else
  echo "taskset not found: not pinned (rensa's bulk API may use more than one thread)"
fi
trap 'rm -rf "$out"' EXIT
"${pin[@]}" "$build/bench/near/near_bench" --dev "$ndev" --test "$ntest" --write "$out" --sigs --threads 1 | tee "$out/ours.txt"
rate="$(sed -n 's/^signatures (1 thread, text.* = \([0-9]*\) rows\/s.*/\1/p' "$out/ours.txt")"
prep="$(sed -n 's/^signatures (1 thread, prepared shingle hashes.* = \([0-9]*\) rows\/s.*/\1/p' "$out/ours.txt")"
strs="$(sed -n 's/^signatures (1 thread, prepared shingle strings.* = \([0-9]*\) rows\/s.*/\1/p' "$out/ours.txt")"
echo "== ratios: leakaudit from raw text (shingling included), from prepared shingle strings (hashed"
echo "   with la_cpu_hash_bytes, the peers' input), from prepared 64-bit shingle hashes"
"${pin[@]}" "$here/.venv/bin/python" "$here/peers.py" "$out" --ours-rows-per-s "$rate" --ours "strings=$strs" --ours "hashes=$prep"
