#!/usr/bin/env bash
# Calibration of the built-in encoder: GSM8K rephrases and STS-B embedded by `leakaudit embed`
# (all-MiniLM-L6-v2 installed by scripts/install-deps.sh), then scored by the same benchmark as the
# vectors of sentence-transformers (bench_semantic quality: pair and per-row precision/recall by
# threshold, ROC AUC). No Python at embedding time; python3 only writes the texts.
#   bench/encoder/quality.sh DATA_DIR [OUT_DIR=bench/out/encoder]
# MODEL=NAME embeds with that installed model instead (OUT_DIR default bench/out/encoder-NAME).
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
data="${1:?usage: quality.sh DATA_DIR [OUT_DIR]}"
model="${MODEL:-}"
out="${2:-$root/bench/out/encoder${model:+-$model}}"
cmake -S "$root" -B "$root/build-bench" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$root/build-bench" -j2 --target leakaudit bench_semantic >/dev/null
la="$root/build-bench/leakaudit"
python3 "$root/bench/encoder/texts.py" "$data" "$out/texts" >/dev/null
for f in "$out"/texts/*.txt; do
  name="$(basename "$f" .txt)"
  [ -s "$out/$name.npy" ] || "$la" embed "$f" ${model:+--model "$model"} --out "$out/$name.npy"
done
"$root/build-bench/bench/semantic/bench_semantic" quality "$data" "$out"
