#!/usr/bin/env bash
# --on-invalid reject: invalid rows go to rejects.jsonl with their reasons, the run goes on, and
# the counts add up everywhere: rows read = rows placed + rows rejected.
source "$(dirname "$0")/lib.bash"

cat >dev.jsonl <<'J'
{"id":"d1","text":"How many legs does a spider have?"}
{"id":"d2"}
{"id":"d3","text":"What is the boiling point of water?","available_on":"2026-7-1"}
{"id":"d4","text":"Name the largest planet."}
not json at all
J
printf '%s\n' '{"id":"t1","text":"Name the largest planet."}' '{"id":"t2","text":"Who wrote Hamlet?"}' \
    '{"id":"","text":"no id"}' >test.jsonl
printf '{"id":"t3","text":"bad \xff byte"}\n' >>test.jsonl

check "audit --on-invalid reject goes on and finds the planted copy (exit 1)"
la audit --dev dev.jsonl --test test.jsonl --on-invalid reject --out out
expect_rc 1
expect_has out.txt "rows read 9 = placed 4 + rejected 5"

check "rejects.jsonl holds each rejected row with file, line and reasons"
python3 - out/rejects.jsonl <<'PY' || fail "rejects.jsonl is not as expected"
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
got = sorted((r["file"], r["line"], r["reasons"][0].split(":")[0]) for r in rows)
want = sorted([("dev.jsonl", 2, "text"), ("dev.jsonl", 3, "available_on"), ("dev.jsonl", 5, "record"),
               ("test.jsonl", 3, "id"), ("test.jsonl", 4, "text")])
if got != want:
    print("got", got, "want", want)
    sys.exit(1)
d2 = [r for r in rows if r.get("id") == "d2"][0]
assert d2["reasons"] == ["text: missing; expected a string; the record has keys id (choose with --text-field F, "
                         "or for one partition --text-field PART=F)"], d2
assert d2["split"] == "dev", d2
PY

check "report.json counts add up, per partition too"
python3 - out/report.json <<'PY' || fail "report.json counts do not add up"
import json, sys
c = json.load(open(sys.argv[1]))["counts"]
assert c["rows_read"] == 9 and c["rows_placed"] == 4 and c["rows_rejected"] == 5, c
assert c["rows_read"] == c["rows_placed"] + c["rows_rejected"], c
p = c["partitions"]
assert p["dev"]["read"] == 5 and p["dev"]["rejected"] == 3, p
assert p["test"]["read"] == 4 and p["test"]["rejected"] == 2, p
for name, v in p.items():
    assert v["read"] == v["kept"] + v["quarantined"] + v["rejected"], (name, v)
PY

check "assignments.jsonl has one line per row read, rejected rows marked 'rejected'"
[ "$(wc -l <out/assignments.jsonl)" -eq 9 ] || fail "assignments.jsonl should have 9 lines"
[ "$(grep -c '"split_out":"rejected"' out/assignments.jsonl)" -eq 5 ] || fail "expected 5 rejected assignments"
expect_has out/assignments.jsonl '"id":"d2","split_in":"dev","split_out":"rejected"'

check "clean manifests leave rejected rows out"
expect_lacks out/dev.jsonl '"d2"'
expect_lacks out/test.jsonl 'no id'

check "split --on-invalid reject: the same arithmetic"
printf '%s\n' '{"id":"a","available_on":"2026-01-01"}' '{"id":"b","available_on":"2026-02-30"}' \
    '{"id":"c","available_on":"2026-08-01"}' '{"id":"a","available_on":"2026-08-01"}' >s.jsonl
la split --cutoff 2026-07-01 s.jsonl --on-invalid reject --out sout
expect_rc 0
expect_has out.txt "dev 1, test 1, quarantine 0 rows; rejected 2 (rows read 4)"
[ "$(wc -l <sout/rejects.jsonl)" -eq 2 ] || fail "split: expected 2 rejects"
[ "$(wc -l <sout/assignments.jsonl)" -eq 4 ] || fail "split: assignments.jsonl should have 4 lines"
[ "$(grep -c '"split_out":"rejected"' sout/assignments.jsonl)" -eq 2 ] || fail "split: expected 2 rejected assignments"
python3 - sout/report.json <<'PY' || fail "split report.json counts do not add up"
import json, sys
c = json.load(open(sys.argv[1]))["counts"]
assert c["rows_read"] == 4 and c["rows_placed"] == 2 and c["rows_rejected"] == 2, c
PY

pass
