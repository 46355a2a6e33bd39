#!/usr/bin/env bash
# From links to decisions: the resolve policies, suspect clusters, the leak's inflation of the score
# with intervals, the random-split expectation, and the three-set split maker from the command line.
source "$(dirname "$0")/lib.bash"

# 40 held-out rows with per-row scores; 8 of them are copied into dev and all 8 are answered right,
# while the clean rows (every fourth one wrong) score 24 of 32: 0.80 overall against 0.75 clean.
: >dev.jsonl
: >test.jsonl
for i in $(seq 1 40); do
  s=1; if [ "$i" -gt 8 ] && [ $(( i % 4 )) -eq 0 ]; then s=0; fi
  printf '{"id":"t%02d","text":"held-out question number %d about topic %d","score":%d,"family":"g%02d"}\n' "$i" "$i" "$i" "$s" "$i" >>test.jsonl
done
for i in $(seq 1 8); do
  printf '{"id":"d%02d","text":"HELD-OUT question   number %d about topic %d"}\n' "$i" "$i" "$i" >>dev.jsonl
done
for i in $(seq 1 30); do
  printf '{"id":"x%02d","text":"training sentence %d","family":"g%02d"}\n' "$i" "$i" "$(( i + 40 ))" >>dev.jsonl
done

check "--score-field: report.json and report.md show accuracy on leaked and clean rows and the inflation"
la audit --dev dev.jsonl --test test.jsonl --embed none --near off --out inflate
expect_rc 1
[ "$(json_get inflate/report.json 'j["statistics"]["heldout"]["accuracy_source"]')" = scores ] || fail "accuracy_source"
[ "$(json_get inflate/report.json 'j["statistics"]["heldout"]["leaked"]["n"]')" = 8 ] || fail "8 leaked rows"
[ "$(json_get inflate/report.json 'j["statistics"]["heldout"]["leaked"]["accuracy"]')" = 1 ] || fail "leaked accuracy 1"
[ "$(json_get inflate/report.json 'j["statistics"]["heldout"]["after"]["n"]')" = 32 ] || fail "32 clean rows"
[ "$(json_get inflate/report.json 'round(j["statistics"]["heldout"]["after"]["accuracy"],4)')" = 0.75 ] || fail "clean accuracy 24/32"
[ "$(json_get inflate/report.json 'round(j["statistics"]["heldout"]["inflation"],4)')" = 0.05 ] || fail "inflation 0.80-0.75"
expect_has out.txt "at 75.0% accuracy (observed)"
expect_has inflate/report.md "Leaked rows: 8 rows, 100.0%"
expect_has inflate/report.md "After quarantine (clean): 32 rows, 75.0%"
expect_has inflate/report.md "inflates the score by +5.0 points"
expect_has inflate/report.md "too small to gate a release"

check "random-split expectation next to the observation (families as groups)"
[ "$(json_get inflate/report.json 'j["statistics"]["random_split"]["groups"]')" = 70 ] || fail "70 families"
[ "$(json_get inflate/report.json 'j["statistics"]["random_split"]["observed_mixed_groups"]')" = 0 ] || fail "no family crosses"
expect_has inflate/report.md "would put 0.0 of the 70 families on both sides; here 0 do"

check "--resolve keep-test keeps every held-out row and moves the 8 dev copies out"
la audit --dev dev.jsonl --test test.jsonl --embed none --near off --resolve keep-test --out keeptest
expect_rc 1
[ "$(json_get keeptest/report.json 'j["counts"]["partitions"]["test"]["kept"]')" = 40 ] || fail "test kept 40"
[ "$(json_get keeptest/report.json 'j["counts"]["partitions"]["dev"]["quarantined"]')" = 8 ] || fail "dev quarantined 8"

check "--resolve keep-seen keeps the dev rows and moves the 8 held-out copies out"
la audit --dev dev.jsonl --test test.jsonl --embed none --near off --resolve keep-seen --out keepseen
[ "$(json_get keepseen/report.json 'j["counts"]["partitions"]["test"]["quarantined"]')" = 8 ] || fail "test quarantined 8"
[ "$(json_get keepseen/report.json 'j["counts"]["partitions"]["dev"]["kept"]')" = 38 ] || fail "dev kept 38"

check "a cluster over --max-cluster rows is flagged with its weakest links"
cat >chain_dev.jsonl <<'J'
{"id":"c1","text":"alpha","family":"big"}
{"id":"c2","text":"beta","family":"big"}
{"id":"c3","text":"gamma","family":"big"}
J
cat >chain_test.jsonl <<'J'
{"id":"c4","text":"delta","family":"big"}
{"id":"c5","text":"epsilon"}
J
la audit --dev chain_dev.jsonl --test chain_test.jsonl --embed none --near off --max-cluster 3 --out chain
expect_rc 1
[ "$(json_get chain/report.json 'len(j["findings"]["suspect_clusters"])')" = 1 ] || fail "one suspect cluster"
[ "$(json_get chain/report.json 'j["findings"]["suspect_clusters"][0]["rows"]')" = 4 ] || fail "of 4 rows"
expect_has chain/report.md "Suspect clusters"
python3 - chain/clusters.jsonl <<'PY' || fail "clusters.jsonl is not as expected"
import json, sys
c = [json.loads(l) for l in open(sys.argv[1])]
assert len(c) == 1 and c[0]["rows"] == 4 and c[0]["suspect"] is True, c
assert c[0]["members"] == {"dev": ["c1", "c2", "c3"], "test": ["c4"]} and c[0]["kinds"] == ["family"], c
PY
la audit --dev chain_dev.jsonl --test chain_test.jsonl --embed none --near off --max-cluster 4 --out chain4
[ "$(json_get chain4/report.json 'len(j["findings"]["suspect_clusters"])')" = 0 ] || fail "no suspect at 4"

check "split --three-set: manifest, disjoint sets that add up, same seed same bytes"
: >labeled.jsonl
for i in $(seq 1 60); do
  l=pos; [ $(( i % 3 )) -eq 0 ] && l=neg; [ $(( i % 10 )) -eq 0 ] && l=rare
  printf '{"id":"L%02d","text":"labeled example %d","label":"%s"}\n' "$i" "$i" "$l" >>labeled.jsonl
done
printf '%s\n' '{"id":"L99","text":"LABELED   example 7","label":"neg"}' >>labeled.jsonl
la split --three-set --near off --seed 11 --demos-per-class 2 labeled.jsonl --out three
expect_rc 0
for f in manifest.md manifest.json demos.jsonl dev.jsonl test.jsonl quarantine.jsonl assignments.jsonl; do
  [ -f "three/$f" ] || fail "missing three/$f"
done
expect_has three/manifest.md "Test set opened: 0 times"
expect_has three/manifest.md "| revision | what changed | the failure that motivated it | dev score before | dev score after |"
n=$(cat three/demos.jsonl three/dev.jsonl three/test.jsonl three/quarantine.jsonl | wc -l)
[ "$n" -eq 61 ] || fail "sets hold $n rows, expected 61"
[ "$(cat three/demos.jsonl three/dev.jsonl three/test.jsonl three/quarantine.jsonl | sort | uniq -d | wc -l)" -eq 0 ] || fail "a row is in two sets"
[ "$(wc -l <three/quarantine.jsonl)" -eq 1 ] || fail "the later exact copy is set aside"
[ "$(json_get three/manifest.json 'j["counts"]["label_conflicts"]')" = 1 ] || fail "one label conflict (L07 pos vs L99 neg)"
[ "$(wc -l <three/demos.jsonl)" -eq 6 ] || fail "2 demos for each of 3 classes"
la split --three-set --near off --seed 11 --demos-per-class 2 labeled.jsonl --out three_again
expect_same three/assignments.jsonl three_again/assignments.jsonl
[ "$(json_get three/manifest.json 'j["fingerprints"]')" = "$(json_get three_again/manifest.json 'j["fingerprints"]')" ] || fail "fingerprints differ"
la split --three-set --near off --seed 12 --demos-per-class 2 labeled.jsonl --out three_other
cmp -s three/assignments.jsonl three_other/assignments.jsonl && fail "another seed should give another split"

check "split --three-set needs a label on every row"
printf '%s\n' '{"id":"nolabel","text":"x"}' >>labeled.jsonl
la split --three-set labeled.jsonl --out nolab
expect_rc 2
expect_has err.txt "labeled.jsonl:62: label: missing or empty"

pass
