#!/usr/bin/env bash
# The worked example of the chronological split (access before the cutoff, export on it, refund
# spanning it) gives exactly the golden assignments, in any input order, and the manifests hold
# the original rows unchanged.
source "$(dirname "$0")/lib.bash"

in="$SRC/tests/data/worked_example.jsonl"
golden="$SRC/tests/golden/split_worked_example/assignments.jsonl"

check "split --cutoff 2026-07-01 on the worked example exits 0"
la split --cutoff 2026-07-01 "$in" --out out
expect_rc 0
expect_has out.txt "dev 2, test 3, quarantine 2 rows; rejected 0 (rows read 7)"

check "assignments.jsonl equals the golden file byte for byte"
expect_same "$golden" out/assignments.jsonl

check "access -> dev, export -> test, refund -> quarantine (read back as JSON)"
python3 - out/assignments.jsonl <<'PY' || fail "outcomes differ from the worked example"
import json, sys
got = {r["id"]: r["split_out"] for r in map(json.loads, open(sys.argv[1]))}
want = {"access-q1": "dev", "access-q2": "dev", "export-q1": "test", "export-q2": "test",
        "export-q3": "test", "refund-v1": "quarantine", "refund-v2": "quarantine"}
sys.exit(0 if got == want else 1)
PY

check "dev.jsonl, test.jsonl and quarantine.jsonl hold the original lines unchanged"
grep -F '"family":"access"' "$in" >want_dev.jsonl
grep -F '"family":"export"' "$in" >want_test.jsonl
grep -F '"family":"refund"' "$in" >want_quarantine.jsonl
expect_same want_dev.jsonl out/dev.jsonl
expect_same want_test.jsonl out/test.jsonl
expect_same want_quarantine.jsonl out/quarantine.jsonl

check "the same assignments in reversed and shuffled input orders"
tac "$in" >reversed.jsonl
la split --cutoff 2026-07-01 reversed.jsonl --out out-reversed
expect_rc 0
expect_same "$golden" out-reversed/assignments.jsonl
for seed in 1 2 3 4 5; do
    python3 -c 'import random,sys; l=open(sys.argv[1]).readlines(); random.Random(int(sys.argv[2])).shuffle(l); sys.stdout.write("".join(l))' \
        "$in" "$seed" >"shuffled-$seed.jsonl"
    cmp -s "$in" "shuffled-$seed.jsonl" && continue # a shuffle that changed nothing proves nothing
    la split --cutoff 2026-07-01 "shuffled-$seed.jsonl" --out "out-$seed"
    expect_rc 0 "shuffle $seed"
    expect_same "$golden" "out-$seed/assignments.jsonl"
done

check "the rows split across two files give the same assignments"
head -n 3 "$in" >part1.jsonl
tail -n +4 "$in" >part2.jsonl
la split --cutoff 2026-07-01 part2.jsonl part1.jsonl --out out-two
expect_rc 0
expect_same "$golden" out-two/assignments.jsonl

check "cutoff one day later moves export to dev and refund stays in quarantine"
la split --cutoff 2026-07-02 "$in" --out out-later
expect_rc 0
python3 - out-later/assignments.jsonl <<'PY' || fail "cutoff 2026-07-02: wrong outcomes"
import json, sys
got = {r["id"]: r["split_out"] for r in map(json.loads, open(sys.argv[1]))}
sys.exit(0 if got["export-q1"] == "dev" and got["refund-v1"] == "quarantine" and got["access-q1"] == "dev" else 1)
PY

check "a split without --cutoff is a usage error"
la split "$in" --out out-nocut
expect_rc 2
expect_has err.txt "--cutoff"
[ ! -e out-nocut ] || fail "out-nocut was created"

pass
