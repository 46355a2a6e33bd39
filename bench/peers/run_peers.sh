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
trap 'rm -rf "$out"' EXIT
"$build/bench/near/near_bench" --dev "$ndev" --test "$ntest" --write "$out" --sigs --threads 1 | tee "$out/ours.txt"
rate="$(sed -n 's/^signatures (1 thread, text.* = \([0-9]*\) rows\/s.*/\1/p' "$out/ours.txt")"
prep="$(sed -n 's/^signatures (1 thread, prepared.* = \([0-9]*\) rows\/s.*/\1/p' "$out/ours.txt")"
echo "== ratios with leakaudit from raw text (shingling included)"
"$here/.venv/bin/python" "$here/peers.py" "$out" --ours-rows-per-s "$rate"
echo "== leakaudit from prepared shingle hashes: $prep rows/s (compare with the peer rates above)"
