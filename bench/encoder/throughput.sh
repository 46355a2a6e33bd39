#!/usr/bin/env bash
# CPU throughput of the built-in encoder against sentence-transformers (PyTorch), same model
# (all-MiniLM-L6-v2 from the models folder), same texts, same batch size, one after the other in
# one run, plus the peak memory (max RSS) of each process. Also the fidelity check: every vector
# of the sample against the reference (lowest cosine).
#   bench/encoder/throughput.sh DATA_DIR [N=1000] [BATCH=32]
# Needs the venv of bench/semantic/setup_venv.sh (sentence-transformers, torch).
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
data="${1:?usage: throughput.sh DATA_DIR [N] [BATCH]}"
n="${2:-1000}"
batch="${3:-32}"
py="$root/bench/semantic/.venv/bin/python"
model="${LEAKAUDIT_MODELS:-$root/models}/all-MiniLM-L6-v2"
out="$root/bench/out/encoder-throughput"
mkdir -p "$out"
cmake -S "$root" -B "$root/build-bench" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$root/build-bench" -j2 --target leakaudit >/dev/null
"$py" "$root/bench/encoder/sample.py" "$data" "$out/sample.txt" "$n"
threads=$(nproc)
# Two rounds, alternating, so a busy moment on a shared machine hits both sides.
for round in 1 2; do
  echo "== round $round: sentence-transformers (torch threads $threads, batch $batch)"
  /usr/bin/time -f "peak RSS %M KB, wall %e s" env OMP_NUM_THREADS="$threads" HF_HUB_OFFLINE=1 \
    "$py" "$root/bench/encoder/reference.py" "$model" "$out/sample.txt" "$out/ref" "$batch" 2>&1 | grep -E "reference:|peak"
  echo "== round $round: leakaudit embed (batch $batch)"
  /usr/bin/time -f "peak RSS %M KB, wall %e s" "$root/build-bench/leakaudit" embed "$out/sample.txt" \
    --batch "$batch" --out "$out/ours.npy" 2>&1 | grep -E "leakaudit embed:|peak"
done
"$py" - "$out/ours.npy" "$out/ref.npy" <<'PY'
import sys
import numpy as np
a, b = np.load(sys.argv[1]), np.load(sys.argv[2])
c = (a * b).sum(1)
print(f"fidelity: {len(c)} sentences, lowest cosine {c.min():.7f}, mean {c.mean():.7f}, "
      f"{int((c >= 0.999).sum())} of {len(c)} at or above 0.999")
PY
