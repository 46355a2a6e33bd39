#!/usr/bin/env bash
# The near tier from the command line: a lightly edited copy and a test question quoted inside a
# long dev passage are found as near pairs with their scores; unrelated rows are not linked; the
# report states the LSH shape and its expected recall.
source "$(dirname "$0")/lib.bash"

cat >test.jsonl <<'J'
{"id":"t-edit","text":"A farmer has 17 cows and buys 5 more every month. How many cows does the farmer have after 6 months if none are sold?"}
{"id":"t-quote","text":"Sara reads 12 pages each evening and twice as many on Sundays. How many pages does she read in two weeks?"}
{"id":"t-alone","text":"Name the capital city of a country that borders both Spain and France."}
J
cat >dev.jsonl <<'J'
{"id":"d-edit","text":"A farmer has 17 goats and buys 5 more every month. How many goats does the farmer have after 6 months if none are sold?"}
{"id":"d-passage","text":"Worked examples for the reading unit. First, recall how weekly totals are formed from daily habits and how special days change the count. Sara reads 12 pages each evening and twice as many on Sundays. How many pages does she read in two weeks? To answer, count the ordinary evenings and the Sundays separately, then add them. The same method applies to savings, exercise minutes and any other habit with a different amount on some days of the week."}
{"id":"d-other","text":"The library opens at nine and closes at five on weekdays, with shorter hours on Saturday."}
J

check "edited copy and quoted copy: exit 1, both near pairs with their scores; no link to the unrelated rows"
la audit --dev dev.jsonl --test test.jsonl --embed none --fail-on near --out near
expect_rc 1
python3 - near/pairs.jsonl <<'PY' || fail "near pairs are not as expected"
import json, sys
pairs = {(p["id_a"], p["id_b"]): p for p in map(json.loads, open(sys.argv[1]))}
assert set(pairs) == {("d-edit", "t-edit"), ("d-passage", "t-quote")}, pairs.keys()
e = pairs[("d-edit", "t-edit")]
assert "near" in e["kinds"] and 0.5 < e["scores"]["jaccard"] < 1, e
q = pairs[("d-passage", "t-quote")]
assert "near" in q["kinds"] and q["scores"]["containment"] >= 0.9 and q["scores"]["jaccard"] < 0.33, q
for p in pairs.values():
    for k in ("jaccard", "containment", "minhash", "simhash_distance"):
        assert k in p["scores"], (k, p)
PY
[ "$(json_get near/report.json 'j["findings"]["near"]["lsh"]["bands"] * j["findings"]["near"]["lsh"]["rows"] <= j["findings"]["near"]["num_perm"]')" = True ] || fail "bands x rows must fit in the permutations"
[ "$(json_get near/report.json 'j["findings"]["near"]["lsh"]["expected_recall_at_threshold"] > 0.5')" = True ] || fail "expected recall"
expect_has near/report.md "## Near copies"
expect_has near/report.md "expected recall"

check "--near-threshold 0.95 drops the edited copy; containment still finds the quote"
la audit --dev dev.jsonl --test test.jsonl --embed none --near-threshold 0.95 --out strict
[ "$(json_get strict/report.json 'j["findings"]["pairs_by_kind"]["near"]')" = 1 ] || fail "one near pair at 0.95"
expect_has strict/pairs.jsonl '"id_a":"d-passage"'

check "--near off: no near pairs; --within lists copies inside a partition without calling them leaks"
la audit --dev dev.jsonl --test test.jsonl --embed none --near off --out off
[ "$(json_get off/report.json 'j["findings"]["pairs_by_kind"]["near"]')" = 0 ] || fail "near off"
cp test.jsonl test2.jsonl
printf '%s\n' '{"id":"t-edit2","text":"A farmer has 17 sheep and buys 5 more every month. How many sheep does the farmer have after 6 months if none are sold?"}' >>test2.jsonl
la audit --dev dev.jsonl --test test2.jsonl --embed none --within --out within
[ -s within/within_pairs.jsonl ] || fail "within_pairs.jsonl should list t-edit / t-edit2"
expect_has within/within_pairs.jsonl '"split":"test"'
expect_lacks within/pairs.jsonl '"id_a":"t-edit"'

pass
