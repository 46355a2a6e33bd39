#!/usr/bin/env bash
# The built-in sentence encoder from the command line: `leakaudit embed` writes one unit vector per
# record; an audit with no vectors given uses the installed model by default and records its name,
# weights hash, threshold and why; a reworded copy is found by meaning where the lexical embedding
# misses it; a question hidden after a long passage is found through windows (and named), not
# without them; bad input and broken models exit 2 naming the file; vectors brought back in from
# `leakaudit embed` are known by the model it names beside them. The parts that need the real
# model skip (exit 77) when scripts/install-deps.sh has not installed it.
source "$(dirname "$0")/lib.bash"

cat >dev.jsonl <<'J'
{"id":"d1","text":"How long does the kettle take to boil?"}
{"id":"d2","text":"Sam bought three apples and ate one of them. How many apples does he have now?"}
{"id":"d3","text":"Name the largest ocean on Earth."}
J
cat >test.jsonl <<'J'
{"id":"t1","text":"After purchasing 3 apples, Sam consumes a single one. What number of apples remain with him?"}
{"id":"t2","text":"Which planet is known for its rings?"}
J

check "usage errors and a broken model folder exit 2 and name what is wrong (no model needed)"
la embed dev.jsonl
expect_rc 2
grep -q -- "--out" err.txt || fail "should say --out is required"
mkdir -p broken
printf '{"model_type": "bert"}' >broken/config.json
la embed dev.jsonl --model ./broken --out x.npy
expect_rc 2
grep -q "broken/config.json" err.txt && grep -q "hidden_size" err.txt || fail "should name config.json and the field"
la audit --dev dev.jsonl --test test.jsonl --model ./nowhere --out o
expect_rc 2
grep -q "nowhere" err.txt || fail "should name the missing folder"
[ ! -e o ] || fail "nothing should be written"

check "with no model installed the default is lexical, and the report says why"
mkdir -p empty-models
LEAKAUDIT_MODELS="$PWD/empty-models" la audit --dev dev.jsonl --test test.jsonl --near off --out lex
expect_rc 0
python3 - lex/report.json <<'PY' || fail "report.json should record the lexical choice and its reason"
import json, sys
s = json.load(open(sys.argv[1]))["findings"]["semantic"]
assert s["embedding"].startswith("lexical"), s
assert "no sentence encoder model is installed" in s["embedding_choice"], s
assert s["threshold"] == 0.5 and "lexical" in s["threshold_source"], s
assert "model" not in s
PY
LEAKAUDIT_MODELS="$PWD/empty-models" la models
expect_rc 0
grep -q "No models installed" out.txt || fail "models should say none are installed"
LEAKAUDIT_MODELS="$PWD/empty-models" la audit --dev dev.jsonl --test test.jsonl --embed model --out o
expect_rc 2
grep -q "is not installed in $PWD/empty-models" err.txt || fail "--embed model without a model should say where it looked"
mkdir -p bad-models/half
cp broken/config.json bad-models/half/
LEAKAUDIT_MODELS="$PWD/bad-models" la models
expect_rc 2
grep -q "half  BROKEN: .*config.json" out.txt || fail "models should flag a broken installed model"

if ! "$LEAKAUDIT" models 2>/dev/null | grep -q "all-MiniLM-L6-v2 (default)"; then
    echo "skipped: model all-MiniLM-L6-v2 is not installed (scripts/install-deps.sh installs it)"
    exit 77
fi

check "leakaudit models lists the default model with its hash and the values an audit with it takes"
la models
expect_rc 0
hash=$(grep -o "blake2b-256:[0-9a-f]\{64\}" out.txt | head -1)
[ -n "$hash" ] || fail "models should print the weights hash"
grep -A1 "all-MiniLM-L6-v2 (default)" out.txt | grep -q "threshold 0.82, no ratio margin, grade cosines: copy 0.97, numbers 0.90$" ||
    fail "models should print the default model's threshold, margin and grade cosines"
if grep -q "^  multilingual-e5-small " out.txt; then
    grep -A1 "^  multilingual-e5-small " out.txt | grep -q "threshold 0.92, ratio margin 1.065, grade cosines: copy 0.99, numbers 0.90, digits 0.95" ||
        fail "models should print the multilingual model's own values"
fi

check "leakaudit embed: one unit vector per record; the rewording is nearer than unrelated text"
la embed dev.jsonl test.jsonl --out v.npy
expect_rc 0
python3 - v.npy <<'PY' || fail "v.npy is not as expected"
import struct, sys, math
b = open(sys.argv[1], "rb").read()
hl = struct.unpack("<H", b[8:10])[0]
hdr = b[10:10 + hl].decode()
assert "'<f4'" in hdr and "(5, 384)" in hdr, hdr
v = struct.unpack("<%df" % (5 * 384), b[10 + hl:])
rows = [v[i * 384:(i + 1) * 384] for i in range(5)]
dot = lambda a, c: sum(x * y for x, y in zip(a, c))
for r in rows:
    assert abs(dot(r, r) - 1) < 1e-5
assert dot(rows[1], rows[3]) > 0.8, dot(rows[1], rows[3])           # d2 ~ t1
assert dot(rows[1], rows[3]) > dot(rows[0], rows[3]) + 0.3
PY
printf '{"id":"x","text":"fine"}\n{"id":"y","body":"no text"}\n' >bad.jsonl
la embed bad.jsonl --out b.npy
expect_rc 2
grep -q "bad.jsonl:2: text" err.txt || fail "should name the file, line and field"

check "leakaudit embed reads the text fields as audit does: several joined, '*' segments, CSV alike"
printf '%s\n' '{"id":"q1","question":"How many apples?","answer":"Five \u00e9 apples."}' \
    '{"id":"q2","question":"Why?","turns":["a"],"answer":"Because."}' >qa.jsonl
printf '%s\n' '{"text":"How many apples?\nFive \u00e9 apples."}' '{"text":"Why?\nBecause."}' >joined.jsonl
printf 'question,answer\nHow many apples?,Five \303\251 apples.\nWhy?,Because.\n' >qa.csv
printf '%s\n' '{"m":[{"content":"How many apples?"},{"content":null},{"content":"Five \u00e9 apples."}]}' \
    '{"m":[{"content":"Why?"},{"content":"Because."}]}' >chat.jsonl
la embed qa.jsonl --text-field question --text-field answer --out qa.npy -q
expect_rc 0
la embed joined.jsonl --out joined.npy -q
expect_rc 0
la embed qa.csv --text-field question --text-field answer --out qa_csv.npy -q
expect_rc 0
la embed chat.jsonl --text-field 'm.*.content' --out chat.npy -q
expect_rc 0
for v in qa_csv.npy chat.npy; do cmp -s qa.npy $v || fail "$v differs from the vectors of the joined fields"; done
cmp -s qa.npy joined.npy || fail "two fields should embed as their text joined by a newline"
la embed qa.jsonl --text-field turns --out t.npy
expect_rc 2
expect_has err.txt "qa.jsonl:1: turns: missing; expected a string; the record has keys id, question, answer (choose with --text-field F)"

check "audit by default uses the model: the rewording is a semantic pair; the report records the model"
la audit --dev dev.jsonl --test test.jsonl --near off --out m
# exit 1 when the link gates the run; a gate that lets a reworded (related-grade) link through exits 0
[ "$rc" -le 1 ] || fail "expected exit 0 or 1, got $rc"
python3 - m/report.json m/pairs.jsonl "$hash" <<'PY' || fail "report.json should record the model"
import json, sys
s = json.load(open(sys.argv[1]))["findings"]["semantic"]
assert s["model"]["name"] == "all-MiniLM-L6-v2" and s["model"]["weights"] == sys.argv[3], s
assert s["embedding_choice"] == "default: every text reads as English, so all-MiniLM-L6-v2 runs", s
assert s["threshold"] == 0.82 and "all-MiniLM-L6-v2" in s["threshold_source"], s
p = [json.loads(l) for l in open(sys.argv[2])]
assert [(x["id_a"], x["id_b"]) for x in p] == [("d2", "t1")], p
PY
grep -q "Model: all-MiniLM-L6-v2, weights $hash" m/report.md || fail "report.md should name the model and hash"
la audit --dev dev.jsonl --test test.jsonl --near off --embed lexical --out l
expect_rc 0
grep -q '"embedding_choice": "asked for (--embed lexical)"' l/report.json || fail "the explicit choice should be recorded"

check "a rephrased question after a long passage is found through windows, and the windows are named"
python3 - <<'PY'
import json
filler = " ".join("Paragraph %d describes the history of the town library, its opening hours, the reading "
                  "room on the second floor and the volunteers who sort the returned books." % i for i in range(14))
q = "A train leaves the station at 3 pm travelling at 60 miles per hour. How far has it gone by 5 pm?"
with open("long_dev.jsonl", "w") as f:
    f.write(json.dumps({"id": "passage", "text": filler + " " + q}) + "\n")
    f.write(json.dumps({"id": "other", "text": "Which planet is the largest in the solar system?"}) + "\n")
with open("long_test.jsonl", "w") as f:
    f.write(json.dumps({"id": "q", "text": "By 5 pm, how many miles has a train covered if it departed at 3 pm going 60 mph?"}) + "\n")
PY
la audit --dev long_dev.jsonl --test long_test.jsonl --near off --out w
[ "$rc" -le 1 ] || fail "expected exit 0 or 1, got $rc"
python3 - w/report.json <<'PY' || fail "the windowed pair should be reported with its byte ranges"
import json, sys
s = json.load(open(sys.argv[1]))["findings"]["semantic"]
assert s["model"]["texts_windowed"] >= 1, s["model"]
wp = s["window_pairs"]
assert len(wp) == 1 and wp[0]["id_a"] == "passage" and wp[0]["id_b"] == "q", wp
text = json.loads(open("long_dev.jsonl").readline())["text"]
b, e = wp[0]["bytes_a"]
assert b > 0 and "How far has it gone" in text.encode()[b:e].decode(), (b, e)
PY
grep -q "Pairs found through windows" w/report.md || fail "report.md should list the windowed pair"
la audit --dev long_dev.jsonl --test long_test.jsonl --near off --semantic-windows off --out nw
expect_rc 0

check "a row in another language makes the default the multilingual model, and the report says which row"
cat >zh_dev.jsonl <<'J'
{"id":"d1","text":"How long does the kettle take to boil?"}
{"id":"zh1","text":"山姆买了三个苹果，吃掉了其中一个。他现在还有几个苹果？"}
J
root=$("$LEAKAUDIT" models | sed -n 's/^Models in \(.*\):$/\1/p')
if [ -e "$root/multilingual-e5-small" ]; then
    la audit --dev zh_dev.jsonl --test test.jsonl --near off --out zh
    [ "$rc" -le 1 ] || fail "expected exit 0 or 1, got $rc"
    python3 - zh/report.json <<'PY' || fail "the multilingual model should be chosen, naming the row"
import json, sys
s = json.load(open(sys.argv[1]))["findings"]["semantic"]
assert s["model"]["name"] == "multilingual-e5-small", s["model"]
assert s["embedding_choice"].startswith("default: 1 of 4 texts are not English (the first: dev row zh1, Chinese"), s
assert "so multilingual-e5-small runs" in s["embedding_choice"], s
assert s["threshold"] == 0.92 and "multilingual-e5-small" in s["threshold_source"], s
# the grades take the model's digits cosine (docs/grades.md, rule 4)
p = json.load(open(sys.argv[1]))["parameters"]
assert p["grade_digits_cosine"] == "0.95" and p["grade_copy_cosine"] == "0.99", p
assert "multilingual-e5-small" in p["grade_cosines_source"], p
PY
    la audit --dev zh_dev.jsonl --test test.jsonl --near off --model all-MiniLM-L6-v2 --out zh_en
    [ "$rc" -le 1 ] || fail "expected exit 0 or 1, got $rc"
    grep -q '"name": "all-MiniLM-L6-v2"' zh_en/report.json || fail "--model should keep the English model"
    ! grep -q '"grade_digits_cosine"' zh_en/report.json || fail "all-MiniLM-L6-v2 has no digits cosine"
    # vectors of the multilingual model brought back in take its threshold and grades; two models are refused
    la embed zh_dev.jsonl --model multilingual-e5-small --out zd5.npy -q
    la embed test.jsonl --model multilingual-e5-small --out zt5.npy -q
    la audit --dev zh_dev.jsonl --test test.jsonl --near off --embeddings dev=zd5.npy --embeddings test=zt5.npy --out zv
    [ "$rc" -le 1 ] || fail "expected exit 0 or 1, got $rc"
    python3 - zv/report.json <<'PY' || fail "e5 vectors brought in should take e5's threshold and digits cosine"
import json, sys
r = json.load(open(sys.argv[1]))
s = r["findings"]["semantic"]
assert s["threshold"] == 0.92 and "multilingual-e5-small" in s["threshold_source"], s
assert r["parameters"]["grade_digits_cosine"] == "0.95", r["parameters"]
PY
    la embed test.jsonl --out zt_en.npy -q
    la audit --dev zh_dev.jsonl --test test.jsonl --near off --embeddings dev=zd5.npy --embeddings test=zt_en.npy --out zmix
    expect_rc 2
    grep -q "vectors of two models cannot be compared" err.txt || fail "vectors of two models should be refused"
else
    echo "  (multilingual-e5-small is not installed: its choice is not checked)"
fi
mkdir -p english-only
ln -s "$root/all-MiniLM-L6-v2" english-only/all-MiniLM-L6-v2
LEAKAUDIT_MODELS="$PWD/english-only" la audit --dev zh_dev.jsonl --test test.jsonl --near off --out zh_missing
[ "$rc" -le 1 ] || fail "expected exit 0 or 1, got $rc"
grep -q "but multilingual-e5-small is not installed, so all-MiniLM-L6-v2 runs" zh_missing/report.json ||
    fail "without the multilingual model the report should say the English one runs, and why"
la embed zh_dev.jsonl --out zh.npy
expect_rc 0
grep -q "note: 1 of 2 texts are not English" err.txt || fail "embed should name the non-English texts"

check "embed writes the model beside its vectors; audit --embeddings knows them as that model's, refuses changed ones"
la embed dev.jsonl --out vd.npy -q
la embed test.jsonl --out vt.npy -q
python3 - vd.npy.json "$hash" <<'PY' || fail "vd.npy.json should name the model, its weights and the shape"
import json, sys
o = json.load(open(sys.argv[1]))
assert o["model"] == "all-MiniLM-L6-v2" and o["weights"] == sys.argv[2], o
assert o["rows"] == 3 and o["dim"] == 384 and o["dtype"] == "float32" and len(o["vectors_blake2b_256"]) == 64, o
PY
la audit --dev dev.jsonl --test test.jsonl --near off --embeddings dev=vd.npy --embeddings test=vt.npy --out e
[ "$rc" -le 1 ] || fail "expected exit 0 or 1, got $rc"
python3 - e/report.json e/pairs.jsonl <<'PY' || fail "the report should name the model that made the vectors"
import json, sys
s = json.load(open(sys.argv[1]))["findings"]["semantic"]
assert "made by leakaudit embed with all-MiniLM-L6-v2" in s["embedding_choice"], s
p = [json.loads(l) for l in open(sys.argv[2])]
assert [(x["id_a"], x["id_b"]) for x in p] == [("d2", "t1")], p
PY
# one value changed after embedding: the origin no longer describes the file
python3 - vt.npy <<'PY'
import struct, sys
b = bytearray(open(sys.argv[1], "rb").read())
hl = struct.unpack("<H", b[8:10])[0]
struct.pack_into("<f", b, 10 + hl, struct.unpack_from("<f", b, 10 + hl)[0] + 0.001)
open(sys.argv[1], "wb").write(b)
PY
la audit --dev dev.jsonl --test test.jsonl --near off --embeddings dev=vd.npy --embeddings test=vt.npy --out e2
expect_rc 2
grep -q "vt.npy.json describes other vectors than vt.npy holds" err.txt || fail "changed vectors should be refused, naming both files"
[ ! -e e2 ] || fail "a refused audit should write nothing"
rm vt.npy.json
la audit --dev dev.jsonl --test test.jsonl --near off --embeddings dev=vd.npy --embeddings test=vt.npy --out e3
[ "$rc" -le 1 ] || fail "expected exit 0 or 1, got $rc"
grep -q "1 of the 2 files come without one" e3/report.json || fail "a file without its origin should be named in the report"

check "leakaudit embed -q prints nothing; --progress json reports each stage; the vectors are the same"
la embed zh_dev.jsonl --out zq.npy -q
expect_rc 0
[ ! -s err.txt ] && [ ! -s out.txt ] || fail "embed -q should print nothing on success"
cmp zh.npy zq.npy || fail "-q should not change the vectors"
la embed zh_dev.jsonl --out zp.npy --progress json
expect_rc 0
python3 - err.txt <<'PY' || fail "--progress json should print one JSON object per line for read, encoding and write"
import json, sys
lines = [l for l in open(sys.argv[1]) if l.startswith("{")]
events = [json.loads(l) for l in lines]
stages = {e["stage"] for e in events if e["progress"] == "end"}
assert {"read", "encoding", "write"} <= stages, stages
enc = [e for e in events if e["stage"] == "encoding" and e["progress"] == "end"][0]
assert enc["done"] == enc["total"] > 0, enc
PY
cmp zh.npy zp.npy || fail "--progress should not change the vectors"
la embed zh_dev.jsonl --out zx.npy --progress sometimes
expect_rc 2
grep -q "sometimes" err.txt || fail "a bad --progress value should be named"
[ ! -e zx.npy ] || fail "a usage error should write nothing"
pass
