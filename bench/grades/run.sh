#!/usr/bin/env bash
# Link grades on real data: GSM8K train vs test (a clean pair of splits whose template siblings must
# not fail the gate), GSM8K with planted edited and quoted copies, and the templated sets
# (make_sets.py). Usage: bench/grades/run.sh SHARED_DATA_DIR [BUILD_DIR] [WORK_DIR]
# Extra audit options go in LA_ARGS (for example LA_ARGS="--embed lexical"; by default the audit
# embeds with the installed model, or lexically when none is installed). The document sets
# (site-policy revisions, copyright files, the near-copy generator's corpus) run with
# LA_DOC_ARGS, "--embed lexical" unless set: the built-in model over 15 MB of policies takes most
# of an hour on two cores, and their figures are about wording.
set -euo pipefail
data=${1:?usage: run.sh SHARED_DATA_DIR [BUILD_DIR] [WORK_DIR]}
build=${2:-build}
work=${3:-$(mktemp -d)}
la="$build/leakaudit"
here=$(dirname "$0")
python3 "$here/make_sets.py" "$data" "$work"

echo "== GSM8K train vs test, by question, default settings"
set +e
"$la" audit --dev "$data/gsm8k/train.jsonl" --test "$data/gsm8k/test.jsonl" --text-field question --out "$work/gsm8k" --quiet ${LA_ARGS:-}
echo "exit $?"
set -e
python3 - "$work/gsm8k/pairs.jsonl" <<'PY'
import json, sys
from collections import Counter
p = [json.loads(l) for l in open(sys.argv[1])]
print("links", len(p), "grades", dict(Counter(x["grade"] for x in p)), "gating", sum(x["gates"] for x in p))
PY
for set_ in gsm8k_planted templated; do
    echo "== $set_"
    set +e
    "$la" audit --dev "$work/${set_}_dev.jsonl" --test "$work/${set_}_test.jsonl" --out "$work/$set_" --quiet ${LA_ARGS:-}
    rc=$?
    set -e
    [ "$rc" -le 1 ] || exit "$rc"
    python3 "$here/score.py" "$work/${set_}_truth.jsonl" "$work/$set_/pairs.jsonl"
done

doc_args=${LA_DOC_ARGS---embed lexical}
for set_ in site_policy licenses; do
    [ -s "$work/${set_}_test.jsonl" ] || { echo "== $set_: not built here"; continue; }
    echo "== $set_ ($doc_args)"
    set +e
    "$la" audit --dev "$work/${set_}_dev.jsonl" --test "$work/${set_}_test.jsonl" --on-invalid reject --out "$work/$set_" --quiet $doc_args
    rc=$?
    set -e
    [ "$rc" -le 1 ] || exit "$rc"
    if [ "$set_" = site_policy ]; then python3 "$here/score_docs.py" site_policy "$work" "$work/$set_/pairs.jsonl"
    else python3 "$here/score_docs.py" licenses "$work/$set_/pairs.jsonl"; fi
done

echo "== near-copy generator, 20000 x 2000 ($doc_args)"
mkdir -p "$work/generator"
"$build/bench/near/near_bench" --dev 20000 --test 2000 --write "$work/generator" > /dev/null
set +e
"$la" audit --dev "$work/generator/dev.jsonl" --test "$work/generator/test.jsonl" --out "$work/generator/out" --quiet $doc_args
rc=$?
set -e
[ "$rc" -le 1 ] || exit "$rc"
python3 "$here/score_docs.py" generator "$work/generator/truth.jsonl" "$work/generator/out/pairs.jsonl"
