#!/usr/bin/env bash
# Grades of content links and the gate over them: template siblings from GSM8K (other names and
# numbers in one frame) are `related`, listed with their shared frame, and neither fail the run nor
# quarantine rows; an edited copy is `near`, a question quoted inside a passage is a `copy`; the
# --fail-on KIND:GRADE grammar and --resolve POLICY:GRADE opt related links in; bad lists exit 2.
source "$(dirname "$0")/lib.bash"
G="$SRC/tests/data/gsm8k_templates"

for embed in lexical default; do
check "GSM8K template siblings, embedding $embed: exit 0, every link related with a shared frame, nothing quarantined"
if [ "$embed" = default ]; then
    la audit --dev "$G/train.jsonl" --test "$G/test.jsonl" --text-field question --out sib
else
    la audit --dev "$G/train.jsonl" --test "$G/test.jsonl" --text-field question --embed lexical --out sib
fi
expect_rc 0
python3 - sib/pairs.jsonl sib/report.json <<'PY' || fail "template siblings are not graded related"
import json, sys
pairs = [json.loads(l) for l in open(sys.argv[1])]
assert len(pairs) >= 6, len(pairs)
for p in pairs:
    assert p["grade"] == "related" and p["gates"] is False and p["cluster"] is None, p
    assert "weighted_containment" in p["scores"] and p["shared_frame"], p
r = json.load(open(sys.argv[2]))
assert r["counts"]["rows_quarantined"] == 0, r["counts"]
f = r["findings"]
assert f["gating_pairs"] == 0 and f["pairs_by_grade"]["related"] == len(pairs), f
assert f["heldout_rows_compared"] == 8 and f["clusters"] == 0, f
assert r["parameters"]["fail_on"] == "family,time,exact:near,near:near,semantic:near", r["parameters"]
PY
expect_has sib/pairs.jsonl '"shared_frame":"a … travels … miles in 3 hours at the same rate how many additional hours would it take to travel an additional … miles"'
expect_has sib/report.md "## Related, not gating"
expect_has sib/report.md "8 of 8 \`test\` rows were compared"
expect_has sib/report.junit.xml 'failures="0"'
[ "$embed" = lexical ] && [ "$(wc -l <sib/pairs.jsonl)" -ge 8 ] || [ "$embed" = default ] || fail "the lexical tiers link at least 8 pairs"
rm -rf sib
done

check "--fail-on all:related opts related links into the gate (exit 1), still without quarantine"
la audit --dev "$G/train.jsonl" --test "$G/test.jsonl" --text-field question --fail-on all:related --out sib_rel
expect_rc 1
[ "$(json_get sib_rel/report.json 'j["counts"]["rows_quarantined"]')" = 0 ] || fail "the gate alone moves no rows"
expect_has sib_rel/report.junit.xml 'at grade related or above'

check "--resolve quarantine:related moves the rows of related links too"
la audit --dev "$G/train.jsonl" --test "$G/test.jsonl" --text-field question --resolve quarantine:related --out sib_q
expect_rc 0
[ "$(json_get sib_q/report.json 'j["counts"]["rows_quarantined"] > 0 and j["findings"]["clusters"] > 0')" = True ] || fail "related links did not quarantine"

cat >test.jsonl <<'J'
{"id":"t-edit","text":"A farmer has 17 cows and buys 5 more every month. How many cows does the farmer have after 6 months if none are sold?"}
{"id":"t-quote","text":"Sara reads 12 pages each evening and twice as many on Sundays. How many pages does she read in two weeks?"}
{"id":"t-sibling","text":"A train travels 270 miles in 3 hours. At the same rate, how many additional hours would it take to travel an additional 180 miles?"}
J
cat >dev.jsonl <<'J'
{"id":"d-edit","text":"A farmer has 17 goats and buys 5 more each month. How many goats does the farmer have after 6 months if none were sold?"}
{"id":"d-passage","text":"Worked examples for the reading unit. First, recall how weekly totals are formed from daily habits. Sara reads 12 pages each evening and twice as many on Sundays. How many pages does she read in two weeks? To answer, count the ordinary evenings and the Sundays separately, then add them."}
{"id":"d-sibling","text":"A plane travels 1200 miles in 3 hours. At the same rate, how many additional hours would it take to travel an additional 2000 miles?"}
J

check "an edited copy is near, a quoted question is a copy, a sibling with other numbers is related; exit 1"
la audit --dev dev.jsonl --test test.jsonl --out mixed
expect_rc 1
python3 - mixed/pairs.jsonl <<'PY' || fail "grades of the planted links"
import json, sys
g = {(p["id_a"], p["id_b"]): p for p in map(json.loads, open(sys.argv[1]))}
assert g[("d-edit", "t-edit")]["grade"] == "near" and g[("d-edit", "t-edit")]["gates"], g[("d-edit", "t-edit")]
assert g[("d-passage", "t-quote")]["grade"] == "copy", g[("d-passage", "t-quote")]
s = g[("d-sibling", "t-sibling")]
assert s["grade"] == "related" and not s["gates"], s
assert s["numbers"] == {"held": 3, "shared": 1, "changed": 2}, s["numbers"]
PY
[ "$(json_get mixed/report.json 'j["counts"]["rows_quarantined"]')" = 4 ] || fail "the near and copy links quarantine their 4 rows, the sibling none"

check "--fail-on near:copy gates only copies: the edited copy no longer fails, the quote still does"
la audit --dev dev.jsonl --test test.jsonl --embed none --fail-on near:copy --out copyonly
expect_rc 1
[ "$(json_get copyonly/report.json 'j["findings"]["gating_pairs"]')" = 1 ] || fail "one gating pair (the quote)"
grep -v d-passage dev.jsonl >dev2.jsonl
la audit --dev dev2.jsonl --test test.jsonl --embed none --fail-on near:copy --out copyonly2
expect_rc 0

for bad in "" "," "near,,exact" "family:near" "near:bogus" "nearish" "none,near"; do
    check "--fail-on '$bad' exits 2 with a message and writes nothing"
    la audit --dev dev.jsonl --test test.jsonl --fail-on "$bad" --out badgate
    expect_rc 2
    expect_has err.txt "--fail-on"
    [ ! -e badgate ] || fail "badgate written"
done
check "--resolve quarantine:bogus exits 2"
la audit --dev dev.jsonl --test test.jsonl --resolve quarantine:bogus --out badres
expect_rc 2
expect_has err.txt "unknown grade"
pass
