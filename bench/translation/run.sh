#!/usr/bin/env bash
# Translation leaks from real human translations: a threshold sweep on `leakaudit embed` vectors,
# then default audits (test held out, dev seen) with each model, scored per held-out row (score.py).
#   bench/translation/run.sh [--descriptions] [OUT_DIR=bench/out/translation] [N=600] [M=3000]
# Default set: Debian message catalogues, English against Chinese and Vietnamese (make_sets.py;
# needs msgunfmt and the catalogues of the installed packages, /usr/share/locale/{zh_CN,vi}).
# --descriptions: Debian's package description translations, English against Chinese, Japanese,
# Russian, German, French and Spanish (descriptions.py; downloads the Translation files of $REL,
# default bookworm, from deb.debian.org into OUT_DIR/i18n).
# Needs the models (scripts/install-deps.sh) and, for the sweep, numpy ($PY, default the
# bench/encoder venv).
set -euo pipefail
descriptions=0
if [ "${1:-}" = --descriptions ]; then descriptions=1; shift; fi
root="$(cd "$(dirname "$0")/../.." && pwd)"
cmake -S "$root" -B "$root/build-bench" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$root/build-bench" -j2 --target leakaudit >/dev/null
la="$root/build-bench/leakaudit" py="${PY:-$root/bench/encoder/.venv/bin/python}"
out="${1:-$root/bench/out/translation}"
if [ "$descriptions" = 1 ]; then
  mkdir -p "$out/i18n"
  for f in Translation-en.xz Translation-zh_CN.bz2 Translation-ja.bz2 Translation-ru.bz2 Translation-de.bz2 \
           Translation-fr.bz2 Translation-es.bz2; do
    [ -s "$out/i18n/$f" ] || curl -sSf -o "$out/i18n/$f" "http://deb.debian.org/debian/dists/${REL:-bookworm}/main/i18n/$f"
  done
  python3 "$root/bench/translation/descriptions.py" "$out/i18n" "$out/set" "${2:-600}" "${3:-3000}"
else
  python3 "$root/bench/translation/make_sets.py" "$out/set" "${2:-600}" "${3:-3000}"
fi
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
