#!/usr/bin/env bash
# Rule 4's digits (docs/grades.md) with multilingual-e5-small, on the three sets it was calibrated
# on: GSM8K test held out against the even-numbered rephrases and every train question, the clean
# GSM8K train questions against test, and the Debian package description translations. Each audit
# is scored per held-out row through the gate. The encoder's vectors are kept in WORK_DIR/cache, so
# a second run (another build, another digits cosine) embeds nothing again.
#   bench/grades/digits.sh SHARED_DATA_DIR [BUILD_DIR=build] [WORK_DIR=bench/out/grades-digits]
# Needs the models (scripts/install-deps.sh) and network for the description translations
# (deb.debian.org, fetched once into WORK_DIR/i18n). First run about 7 minutes on 2 cores.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
data="${1:?usage: digits.sh SHARED_DATA_DIR [BUILD_DIR] [WORK_DIR]}"
la="${2:-$root/build}/leakaudit"
work="${3:-$root/bench/out/grades-digits}"
mkdir -p "$work/gsm" "$work/i18n"
python3 "$root/bench/encoder/gsm8k_sets.py" "$data" "$work/gsm"
for f in Translation-en.xz Translation-zh_CN.bz2 Translation-ja.bz2 Translation-ru.bz2 Translation-de.bz2 \
         Translation-fr.bz2 Translation-es.bz2; do
  [ -s "$work/i18n/$f" ] || curl -sSf -o "$work/i18n/$f" "http://deb.debian.org/debian/dists/${REL:-bookworm}/main/i18n/$f"
done
python3 "$root/bench/translation/descriptions.py" "$work/i18n" "$work/descriptions" 600 3000

audit() { # OUT_NAME audit options...
  local name=$1
  shift
  rm -rf "${work:?}/$name"
  set +e
  "$la" audit "$@" --quiet --cache "$work/cache" --out "$work/$name"
  echo "  exit code $?"
  set -e
}
echo "== GSM8K: test held out against the even rephrases and all train questions (--near off)"
audit rephrased --dev "$work/gsm/rephrased.jsonl" --dev "$work/gsm/train.jsonl" --test "$work/gsm/test.jsonl" \
  --near off --model multilingual-e5-small
python3 - "$work/rephrased" <<'PY'
import json, sys
rep = sys.argv[1]
gating = [p for p in map(json.loads, open(f"{rep}/pairs.jsonl")) if p["gates"]]
flagged = {p["id_b"] for p in gating}
hit = {p["id_b"] for p in gating if p["id_a"] == "r" + p["id_b"][1:]}
train = sum(p["id_a"].startswith("train") for p in gating)
print(f"  through the gate: {len(gating)} links ({train} to train questions), {len(flagged)} rows flagged, "
      f"{len(hit)} with their rephrase: precision {len(hit) / max(1, len(flagged)):.3f}, recall {len(hit) / 660:.3f}")
PY
echo "== GSM8K clean: train questions against test (near tier on)"
audit clean --dev "$work/gsm/train.jsonl" --test "$work/gsm/test.jsonl" --model multilingual-e5-small
python3 - "$work/clean/report.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
print(f"  gating links {r['findings']['gating_pairs']}; grades {r['findings']['pairs_by_grade']}; "
      f"digits cosine {r['parameters'].get('grade_digits_cosine', 'none')}")
PY
echo "== package description translations (e5 is the default: dev is not English)"
audit translations --dev "$work/descriptions/dev.jsonl" --test "$work/descriptions/test.jsonl"
python3 "$root/bench/translation/score.py" "$work/descriptions" "$work/translations" | sed 's/^/  /'
