#!/usr/bin/env bash
# Determinism: the same rows in another order (and another thread count) give a byte-identical
# assignments.jsonl and pairs.jsonl, and the same report.json once the fields documented as
# varying (the timings object and inputs[*].blake2b_256) are removed.
source "$(dirname "$0")/lib.bash"

# A small set with every kind of evidence: families across the boundary and spanning the cutoff,
# time leaks, exact copies in other case/spacing, duplicates within a partition, label conflicts.
python3 - <<'PY'
import json, random
rnd = random.Random(7)
dev, test = [], []
for i in range(60):
    row = {"id": "d%03d" % i, "text": "Dev question number %d about topic %d?" % (i, i % 7),
           "available_on": "2026-%02d-%02d" % (1 + i % 12, 1 + i % 28), "label": str(i % 3)}
    if i % 5 == 0:
        row["family"] = "fam%d" % (i % 4)
    dev.append(row)
for i in range(40):
    row = {"id": "t%03d" % i, "text": "Test question number %d?" % i,
           "available_on": "2026-%02d-%02d" % (6 + i % 6, 1 + i % 28), "label": str(i % 2)}
    if i % 7 == 0:
        row["family"] = "fam%d" % (i % 5)
    test.append(row)
# exact copies across the boundary, with changed case and spacing
for k in range(6):
    src = test[k * 5]
    dev.append({"id": "copy%d" % k, "text": "  " + src["text"].upper().replace(" ", "   "), "label": "9",
                "available_on": "2026-03-0%d" % (k + 1)})
# duplicates within test and within dev
test.append({"id": "t-dup-a", "text": "test question number 3?", "available_on": "2026-09-09"})
dev.append({"id": "a-first", "text": "dev question number 1 about topic 1?", "available_on": "2026-02-02"})
for name, rows in (("dev", dev), ("test", test)):
    with open(name + ".jsonl", "w") as f:
        for r in rows:
            f.write(json.dumps(r, ensure_ascii=False) + "\n")
PY

# shuffled copies under the same file names, so every path in the report is the same
mkdir -p a b c
cp dev.jsonl test.jsonl a/
for d in b c; do
    for f in dev test; do
        python3 -c 'import random,sys; l=open(sys.argv[1]).readlines(); random.Random(sys.argv[2]).shuffle(l); sys.stdout.write("".join(l))' \
            "$f.jsonl" "$d$f" >"$d/$f.jsonl"
    done
done
cmp -s a/dev.jsonl b/dev.jsonl && fail "the shuffle did not change the order"

run_in() { # DIR THREADS
    (cd "$1" && la audit --dev dev.jsonl --test test.jsonl --cutoff 2026-07-01 --threads "$2" --out out &&
        echo "$rc" >rc)
}

check "the audit finds leaks of every kind in the original order"
run_in a 1
[ "$(cat a/rc)" -eq 1 ] || fail "expected exit 1"
python3 - a/out/report.json <<'PY' || fail "the data should exercise family, time and exact links and duplicates"
import json, sys
j = json.load(open(sys.argv[1]))
k = j["findings"]["pairs_by_kind"]
assert k["family"] > 0 and k["time"] > 0 and k["exact"] > 0, k
assert j["findings"]["exact"]["duplicates_within"] >= 2, j["findings"]["exact"]
assert j["findings"]["exact"]["label_conflicts"] >= 1, j["findings"]["exact"]
PY

check "shuffled inputs (and 4 threads) give identical outputs"
run_in b 4
run_in c 2
for d in b c; do
    [ "$(cat $d/rc)" -eq 1 ] || fail "$d: expected exit 1"
    expect_same a/out/assignments.jsonl $d/out/assignments.jsonl
    expect_same a/out/pairs.jsonl $d/out/pairs.jsonl
    strip_report a/out/report.json a.report.json
    strip_report $d/out/report.json $d.report.json
    expect_same a.report.json $d.report.json
done

check "the stripped report.json really differs only in the removed fields"
python3 - a/out/report.json b/out/report.json <<'PY' || fail "fingerprints of shuffled files should differ"
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:])
assert "timings" in a and all("blake2b_256" in i for i in a["inputs"])
assert a["inputs"][0]["blake2b_256"] != b["inputs"][0]["blake2b_256"]
PY

check "the same run twice gives byte-identical assignments and pairs"
(cd a && la audit --dev dev.jsonl --test test.jsonl --cutoff 2026-07-01 --out out2)
expect_same a/out/assignments.jsonl a/out2/assignments.jsonl
expect_same a/out/pairs.jsonl a/out2/pairs.jsonl

check "split: shuffled inputs give the same assignments.jsonl and report.json"
for d in a b; do
    (cd $d && la split --cutoff 2026-07-01 dev.jsonl test.jsonl --out split && echo "$rc" >rc)
    [ "$(cat $d/rc)" -eq 0 ] || fail "$d: split failed"
done
expect_same a/split/assignments.jsonl b/split/assignments.jsonl
strip_report a/split/report.json a.split.json
strip_report b/split/report.json b.split.json
expect_same a.split.json b.split.json

pass
