#!/usr/bin/env bash
# Translation leaks from real human translations (Debian message catalogues, English against
# Chinese and Vietnamese; make_sets.py): a threshold sweep on `leakaudit embed` vectors, then
# default audits (test held out, dev seen) with each model, scored per held-out row (score.py).
#   bench/translation/run.sh [OUT_DIR=bench/out/translation] [N=600] [M=3000]
# Needs msgunfmt (gettext), the catalogues of the installed packages (/usr/share/locale/{zh_CN,vi}),
# the models (scripts/install-deps.sh) and, for the sweep, numpy ($PY, default the bench/encoder venv).
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
cmake -S "$root" -B "$root/build-bench" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$root/build-bench" -j2 --target leakaudit >/dev/null
la="$root/build-bench/leakaudit" py="${PY:-$root/bench/encoder/.venv/bin/python}"
out="${1:-$root/bench/out/translation}"
python3 "$root/bench/translation/make_sets.py" "$out/set" "${2:-600}" "${3:-3000}"
python3 - "$out/set" <<'PY'
import json, sys
d = sys.argv[1]
for name in ("test", "dev"):
    with open(f"{d}/{name}.txt", "w", encoding="utf-8") as f:
        for line in open(f"{d}/{name}.jsonl", encoding="utf-8"):
            f.write(" ".join(json.loads(line)["text"].split()) + "\n")
PY
for model in multilingual-e5-small all-MiniLM-L6-v2; do
  echo "== $model"
  for part in test dev; do
    "$la" embed "$out/set/$part.txt" --model "$model" --out "$out/$model-$part.npy" 2>&1 | sed 's/^/  /'
  done
  "$py" "$root/bench/translation/score.py" "$out/set" --sweep "$out/$model-test.npy" "$out/$model-dev.npy"
  set +e
  "$la" audit --dev "$out/set/dev.jsonl" --test "$out/set/test.jsonl" --model "$model" --quiet \
    --out "$out/report-$model" "${@:4}"
  echo "  audit exit code $?"
  set -e
  python3 "$root/bench/translation/score.py" "$out/set" "$out/report-$model"
done
