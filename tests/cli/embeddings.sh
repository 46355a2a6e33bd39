#!/usr/bin/env bash
# Embeddings in: .npy files per partition and vectors in a JSON field find the planted reworded
# copy as a semantic pair; a bad .npy (wrong dtype, wrong shape, wrong row count, NaN) exits 2 with
# a message naming the file (and the row) and writes nothing.
source "$(dirname "$0")/lib.bash"

cat >dev.jsonl <<'J'
{"id":"d1","text":"How long does the kettle take to boil?"}
{"id":"d2","text":"Sam bought three apples and ate one; how many remain?"}
J
cat >test.jsonl <<'J'
{"id":"t1","text":"After buying 3 apples Sam eats 1. What is left?"}
{"id":"t2","text":"Which planet is known for its rings?"}
J
write_npy dev.npy "<f4" "1,0,0,0" "0,1,0.05,0"
write_npy test.npy "<f2" "0,1,0,0" "0,0,0,1"

check ".npy embeddings: the reworded copy d2 ~ t1 is a semantic pair with its cosine"
la audit --dev dev.jsonl --test test.jsonl --near off --embeddings dev=dev.npy --embeddings test=test.npy --out npy
expect_rc 1
python3 - npy/pairs.jsonl <<'PY' || fail "pairs.jsonl is not as expected"
import json, sys
p = [json.loads(l) for l in open(sys.argv[1])]
assert [(x["id_a"], x["id_b"], x["kinds"]) for x in p] == [("d2", "t1", ["semantic"])], p
assert abs(p[0]["scores"]["cosine"] - 1 / (1 + 0.05 ** 2) ** 0.5) < 1e-5, p
PY
[ "$(wc -l <npy/nearest.jsonl)" -eq 2 ] || fail "nearest.jsonl has a line per held-out row"
expect_has npy/report.json '"embedding": "embeddings from .npy files"'

check "--embedding-field: the same vectors stored in the rows"
python3 - <<'PY'
import json
vec = {"d1": [1, 0, 0, 0], "d2": [0, 1, 0.05, 0], "t1": [0, 1, 0, 0], "t2": [0, 0, 0, 1]}
for name in ("dev", "test"):
    with open(name + "_vec.jsonl", "w") as f:
        for line in open(name + ".jsonl"):
            r = json.loads(line); r["vec"] = vec[r["id"]]; f.write(json.dumps(r) + "\n")
PY
la audit --dev dev_vec.jsonl --test test_vec.jsonl --near off --embedding-field vec --out field
expect_rc 1
expect_same <(cut -d, -f1-5 npy/pairs.jsonl) <(cut -d, -f1-5 field/pairs.jsonl)

bad() { # bad NAME EXPECTED-TEXT: the run exits 2, says EXPECTED-TEXT and writes nothing
  la audit --dev dev.jsonl --test test.jsonl --near off --embeddings dev="$1" --embeddings test=test.npy --out "out_$1"
  expect_rc 2
  expect_has err.txt "$2"
  [ ! -e "out_$1" ] || fail "--out written for $1"
}
check "a bad .npy exits 2 with a clear message and writes nothing"
write_npy f64.npy "<f8" "1,0,0,0" "0,1,0,0";        bad f64.npy "f64.npy"
write_npy int.npy "<i4" "1,0,0,0" "0,1,0,0";        bad int.npy "int.npy"
write_npy rows.npy "<f4" "1,0,0,0";                 bad rows.npy "rows.npy"
write_npy nan.npy "<f4" "1,0,0,0" "0,nan,0,0";      bad nan.npy "nan.npy: row 1"
write_npy dims.npy "<f4" "1,0,0" "0,1,0";           bad dims.npy "test.npy: shape (2, 4): expected 3"
write_npy zero.npy "<f4" "0,0,0,0" "0,1,0,0";       bad zero.npy "zero.npy: row 0"
printf 'not a numpy file' >junk.npy;                bad junk.npy "junk.npy"

check "a partition without embeddings is named"
la audit --dev dev.jsonl --test test.jsonl --near off --embeddings dev=dev.npy --out missing
expect_rc 2
expect_has err.txt "no embeddings for partition 'test'"

check "--semantic-margin: a translation-like pair below the threshold is linked with its margin; off by default"
python3 - <<'PY'
import json, math, random
rnd = random.Random(7)
def unit(v):
    n = math.sqrt(sum(x * x for x in v)); return [x / n for x in v]
def rand(): return unit([rnd.gauss(0, 1) for _ in range(16)])
dev = [rand() for _ in range(40)]
test = [rand() for _ in range(10)]
# t0 is d0 at cosine 0.87: below 0.92, but far above both rows' other neighbours
u = rand(); d = sum(a * b for a, b in zip(u, dev[0])); u = unit([a - d * b for a, b in zip(u, dev[0])])
test[0] = [0.87 * a + math.sqrt(1 - 0.87 ** 2) * b for a, b in zip(dev[0], u)]
for name, rows in (("mdev", dev), ("mtest", test)):
    with open(name + ".jsonl", "w") as f:
        for i, v in enumerate(rows):
            f.write(json.dumps({"id": f"{name[1]}{i}", "text": f"row {name} {i}", "vec": v}) + "\n")
PY
la audit --dev mdev.jsonl --test mtest.jsonl --near off --embedding-field vec --semantic-threshold 0.92 --out moff
expect_rc 0
expect_has moff/report.json '"margin": {"ratio": null, "source": "off: no margin is calibrated for this embedding'
la audit --dev mdev.jsonl --test mtest.jsonl --near off --embedding-field vec --semantic-threshold 0.92 \
  --semantic-margin 1.065 --out mon
expect_rc 1
python3 - mon <<'PY' || fail "the margin link is not as expected"
import json, sys
p = [json.loads(l) for l in open(sys.argv[1] + "/pairs.jsonl")]
assert [(x["id_a"], x["id_b"], x["kinds"]) for x in p] == [("d0", "t0", ["semantic"])], p
s = p[0]["scores"]
assert 0.85 <= s["cosine"] < 0.92 and s["margin"] >= 1.065, s
m = json.load(open(sys.argv[1] + "/report.json"))["findings"]["semantic"]["margin"]
assert m["ratio"] == 1.065 and m["k"] == 16 and m["links"] == 1 and m["source"] == "--semantic-margin", m
PY
expect_has mon/report.md "Ratio margin (--semantic-margin)"
for bad in 0.9 abc 3; do
  la audit --dev mdev.jsonl --test mtest.jsonl --near off --embedding-field vec --semantic-margin "$bad" --out mbad
  expect_rc 2
  expect_has err.txt "--semantic-margin $bad: expected a ratio from 1 to 2"
  [ ! -e mbad ] || fail "a refused --semantic-margin $bad wrote mbad"
done
la audit --dev mdev.jsonl --test mtest.jsonl --near off --embedding-field vec --semantic-margin 1.065 --shard 0/2 \
  --out mshard
expect_rc 2
expect_has err.txt "--shard: --semantic-margin compares each pair with every seen row's neighbourhood"

pass
