#!/usr/bin/env bash
# --shard I/N and merge: N shard processes over one input, merged, write the files an unsharded
# run writes, byte for byte (report.json apart from its timings and the per-stage call counts),
# for N = 1, 3 and 8, with the exit code of the unsharded run; the shard index comes from Slurm's
# and Kubernetes' variables; shards that do not belong together, a changed input and a damaged
# shard file are refused with a clear message and no output; options a shard cannot honour are
# refused. With the default model installed, the same over long texts embedded as windows.
source "$(dirname "$0")/lib.bash"

# Generated rows with every kind of content link across the boundary: near copies (a few words
# changed), held-out questions quoted inside long seen passages (containment, and windows for the
# encoder), exact copies, shared families and a date cutoff, over two seen partitions.
python3 - <<'PY'
import json, random
rnd = random.Random(11)
words = ("apple river stone cloud market teacher window garden number silver engine paper forest "
         "bridge letter yellow camera doctor island kitchen ladder mirror needle orange pocket "
         "rabbit saddle ticket violin wagon basket candle dinner feather guitar hammer jacket "
         "lemon magnet nickel oyster pepper quiet rocket shadow tunnel velvet whistle").split()
def sentence(n):
    return " ".join(rnd.choice(words) for _ in range(n)).capitalize() + "."
test = [{"id": "t%03d" % i, "text": sentence(18) + " " + sentence(10) + "?", "available_on": "2026-06-%02d" % (1 + i % 28)}
        for i in range(60)]
for i in range(0, 60, 9):
    test[i]["family"] = "fam%d" % i
dev, train = [], []
for i in range(220):
    dev.append({"id": "d%03d" % i, "text": sentence(20) + " " + sentence(12), "available_on": "2026-03-%02d" % (1 + i % 28)})
for i in range(120):
    train.append({"id": "r%03d" % i, "text": " ".join(sentence(15) for _ in range(3)), "available_on": "2026-02-01"})
for k in range(24):  # near copies: two words changed
    w = test[k]["text"].split()
    for _ in range(2):
        w[rnd.randrange(len(w))] = rnd.choice(words)
    (dev if k % 2 else train).append({"id": "near%02d" % k, "text": " ".join(w), "available_on": "2026-04-01"})
for k in range(24, 34):  # quoted inside long passages
    passage = " ".join(sentence(16) for _ in range(30))
    train.append({"id": "quote%02d" % k, "text": passage + " " + test[k]["text"] + " " + passage, "available_on": "2026-01-05"})
for k in range(34, 39):  # exact copies
    dev.append({"id": "exact%02d" % k, "text": test[k]["text"].upper(), "available_on": "2026-04-02"})
for k in range(0, 60, 9):  # a family across the boundary, and one after the cutoff
    dev.append({"id": "fam-d%02d" % k, "text": sentence(14), "family": "fam%d" % k,
                "available_on": "2026-07-09" if k % 2 else "2026-01-09"})
rnd.shuffle(dev)
rnd.shuffle(train)
for name, rows in (("dev", dev), ("train", train), ("test", test)):
    with open(name + ".jsonl", "w") as f:
        for r in rows:
            f.write(json.dumps(r) + "\n")
PY

A=(--part dev=dev.jsonl --part train=train.jsonl --test test.jsonl --cutoff 2026-07-01 --embed lexical --threads 2)

check "the unsharded audit finds near, contained, exact, family and time links"
la audit "${A[@]}" -q --out full
expect_rc 1 "unsharded"
full_rc=$rc
python3 - full/report.json <<'PY' || fail "the data should give links of every kind"
import json, sys
k = json.load(open(sys.argv[1]))["findings"]["pairs_by_kind"]
for kind in ("near", "semantic", "exact", "family", "time"):
    assert k.get(kind, 0) > 0, (kind, k)
PY
grep -q '"quote' full/pairs.jsonl || fail "the quoted questions should be linked"

for n in 1 3 8; do
    check "$n shards merged write the unsharded run's files"
    seen=0
    for ((i = 0; i < n; i++)); do
        la audit "${A[@]}" --shard "$i/$n" --out "s$n/$i"
        expect_rc 0 "shard $i/$n"
        expect_has out.txt "shard $i of $n"
        [ "$(ls "s$n/$i")" = shard.bin ] || fail "a shard folder should hold shard.bin alone: $(ls "s$n/$i")"
        mine=$(sed -n 's/.* of its \([0-9]*\) seen rows.*/\1/p' out.txt)
        [ -n "$mine" ] && { [ "$mine" -gt 0 ] || [ "$n" -gt 3 ]; } || fail "shard $i/$n should hold seen rows: $(cat out.txt)"
        seen=$((seen + mine))
    done
    [ "$seen" -eq "$(cat dev.jsonl train.jsonl | wc -l)" ] || fail "the $n shards should hold every seen row once: $seen"
    # the folders in reverse order: the merge does not depend on it
    la merge --out "m$n" -q $(for ((i = n - 1; i >= 0; i--)); do echo "s$n/$i"; done)
    expect_rc "$full_rc" "merge of $n"
    same_outputs full "m$n"
done

check "the shard index from Slurm array and Kubernetes Indexed Job variables"
SLURM_ARRAY_TASK_ID=1 SLURM_ARRAY_TASK_COUNT=3 la audit "${A[@]}" --shard auto --out env-slurm
expect_rc 0 "--shard auto"
expect_same s3/1/shard.bin env-slurm/shard.bin
SLURM_ARRAY_TASK_ID=3 SLURM_ARRAY_TASK_MIN=1 la audit "${A[@]}" --shard 3 --out env-min
expect_same s3/2/shard.bin env-min/shard.bin
JOB_COMPLETION_INDEX=0 la audit "${A[@]}" --shard 3 --out env-kube
expect_same s3/0/shard.bin env-kube/shard.bin
la audit "${A[@]}" --shard 3 --out env-none
expect_rc 2 "--shard N without an index"
expect_has err.txt "JOB_COMPLETION_INDEX"
la audit "${A[@]}" --shard auto --out env-none
expect_rc 2 "--shard auto outside Slurm"
JOB_COMPLETION_INDEX=3 la audit "${A[@]}" --shard 3 --out env-none
expect_rc 2 "an index past the count"
[ ! -e env-none ] || fail "a refused shard should write nothing"

check "bad --shard values and options a shard cannot honour are refused"
for bad in 3/3 -1/3 1/0 x 1/2/3 "" 0/5000; do
    la audit "${A[@]}" --shard "$bad" --out bad
    expect_rc 2 "--shard '$bad'"
    expect_has err.txt "--shard"
done
la audit "${A[@]}" --shard 0/3 --within --out bad
expect_rc 2 "--within"
expect_has err.txt "--within"
la audit "${A[@]}" --shard 0/3 --baseline full --out bad
expect_rc 2 "--baseline"
expect_has err.txt "leakaudit merge"
la audit "${A[@]}" --shard 0/3 --cache c --out bad
expect_rc 2 "--cache"
la audit "${A[@]}" --shard 0/3 --semantic-method faiss-ivf --out bad
expect_rc 2 "faiss-ivf"
expect_has err.txt "tiles"
[ ! -e bad ] || fail "a refused shard should write nothing"

check "merge refuses shards that do not belong together, and writes nothing"
la merge --out bad s3/0 s3/1
expect_rc 2 "a missing shard"
expect_has err.txt "give all 3"
la merge --out bad s3/0 s3/1 s3/1
expect_rc 2 "a shard twice"
expect_has err.txt "both shard 1 of 3"
la merge --out bad s3/0 s3/1 s8/2
expect_rc 2 "shards of two audits"
expect_has err.txt "not one sharded audit"
la audit "${A[@]}" --near-threshold 0.5 --shard 2/3 --out other
la merge --out bad s3/0 s3/1 other
expect_rc 2 "other options"
expect_has err.txt "--near-threshold"
la merge --out bad full
expect_rc 2 "not a shard folder"
expect_has err.txt "no shard.bin"
mkdir -p damaged && cp -r s3/0 s3/1 s3/2 damaged/
python3 -c 'import sys; p=sys.argv[1]; b=bytearray(open(p,"rb").read()); b[len(b)//2]^=1; open(p,"wb").write(b)' damaged/1/shard.bin
la merge --out bad damaged/0 damaged/1 damaged/2
expect_rc 2 "a damaged shard file"
expect_has err.txt "damaged"
head -c 100 s3/2/shard.bin >damaged/2/shard.bin
la merge --out bad damaged/0 s3/1 damaged/2
expect_rc 2 "a cut shard file"
expect_has err.txt "damaged/2/shard.bin"
cp test.jsonl test.keep
echo '{"id": "late", "text": "A row added after the shards ran."}' >>test.jsonl
la merge --out bad s3/0 s3/1 s3/2
expect_rc 2 "an input changed since the shards"
expect_has err.txt "changed since the shards read it"
mv test.keep test.jsonl
mkdir -p elsewhere
(cd elsewhere && la merge --out bad ../s3/0 ../s3/1 ../s3/2 && [ "$rc" -eq 2 ] && grep -qF "run leakaudit merge in that folder" err.txt) ||
    fail "a merge in another folder, with relative input paths, should say where to run it"
[ ! -e bad ] && [ ! -e elsewhere/bad ] || fail "a refused merge should write nothing"

check "vectors brought in (.npy files and a JSON field): 3 shards merged write the same files"
python3 - <<'PY'
import json, random
rnd = random.Random(5)
test = {json.loads(l)["id"]: None for l in open("test.jsonl")}
def unit(v):
    n = sum(x * x for x in v) ** 0.5
    return [x / n for x in v]
vec = {t: unit([rnd.gauss(0, 1) for _ in range(16)]) for t in test}
for name in ("dev", "train", "test"):
    rows = [json.loads(l) for l in open(name + ".jsonl")]
    out = []
    for r in rows:
        if r["id"] in vec:
            v = vec[r["id"]]
        elif r["id"].startswith(("near", "quote")):  # the copies point close to their source
            v = unit([x + rnd.gauss(0, 0.05) for x in vec["t%03d" % int(r["id"][-2:])]])
        else:
            v = unit([rnd.gauss(0, 1) for _ in range(16)])
        out.append(v)
        r["vec"] = v
    with open(name + "_vec.jsonl", "w") as f:
        f.write("".join(json.dumps(r) + "\n" for r in rows))
    with open(name + ".rows", "w") as f:
        f.write("".join(",".join("%.7f" % x for x in v) + "\n" for v in out))
PY
for p in dev train test; do write_npy "$p.npy" "<f4" $(cat "$p.rows"); done
V=(--part dev=dev.jsonl --part train=train.jsonl --test test.jsonl --embeddings dev=dev.npy --embeddings train=train.npy
   --embeddings test=test.npy --near off --threads 2 -q)
F=(--part dev=dev_vec.jsonl --part train=train_vec.jsonl --test test_vec.jsonl --embedding-field vec --near off
   --threads 2 -q)
for kind in V F; do
    declare -n args=$kind
    la audit "${args[@]}" --out "vfull$kind"
    vrc=$rc
    [ "$(grep -c semantic "vfull$kind/pairs.jsonl")" -ge 30 ] || fail "the planted vectors should give semantic links"
    for i in 0 1 2; do
        la audit "${args[@]}" --shard "$i/3" --out "vs$kind/$i"
        expect_rc 0 "vectors shard $i"
    done
    la merge --out "vm$kind" -q "vs$kind/0" "vs$kind/1" "vs$kind/2"
    expect_rc "$vrc" "vectors merge"
    same_outputs "vfull$kind" "vm$kind"
done

check "vectors whose origin names a model (as leakaudit embed writes it): the merge grades as the unsharded run"
for p in dev train test; do
    python3 - "$p.npy" <<'PY'
import hashlib, json, struct, sys
b = open(sys.argv[1], "rb").read()
hl = struct.unpack("<H", b[8:10])[0]
data = b[10 + hl:]
o = {"made_by": "leakaudit embed", "model": "multilingual-e5-small", "weights": "blake2b-256:" + "0" * 64,
     "rows": len(data) // 64, "dim": 16, "dtype": "float32",
     "vectors_blake2b_256": hashlib.blake2b(data, digest_size=32).hexdigest()}
open(sys.argv[1] + ".json", "w").write(json.dumps(o) + "\n")
PY
done
# that model's margin does not shard: off here, its threshold and grades apply
la audit "${V[@]}" --semantic-margin off --out ofull
orc=$rc
grep -q '"grade_digits_cosine": "0.95"' ofull/report.json || fail "the origin's model should set the grades"
for i in 0 1 2; do
    la audit "${V[@]}" --semantic-margin off --shard "$i/3" --out "os/$i"
    expect_rc 0 "origin shard $i"
done
la merge --out om -q os/0 os/1 os/2
expect_rc "$orc" "origin merge"
same_outputs ofull om

check "standard input is refused: merge could not read it again"
la audit --dev - --test test.jsonl --embed none --shard 0/2 --out bad <dev.jsonl
expect_rc 2 "--shard with standard input"
expect_has err.txt "standard input"

check "merge takes --baseline and --fail-on-new like audit"
la merge --out again --baseline full --fail-on-new -q s3/2 s3/0 s3/1
expect_rc 0 "no link is new against the unsharded run"
expect_has again/report.json '"links": {"new": 0,'

check "docker/slurm-shards.sh: its array and merge jobs, run by a stand-in for sbatch, write the unsharded reports"
mkdir -p stub reports
ln -sf "$LEAKAUDIT" stub/leakaudit
cat >stub/sbatch <<'SH'
#!/usr/bin/env bash
# Runs what sbatch would queue, at once: each array task with Slurm's variables, then the rest.
array="" wrap=""
for a in "$@"; do
    case "$a" in
    --array=*) array=${a#--array=} ;;
    --wrap=*) wrap=${a#--wrap=} ;;
    esac
done
if [ -n "$array" ]; then
    lo=${array%-*} hi=${array#*-}
    for ((i = lo; i <= hi; i++)); do
        SLURM_ARRAY_JOB_ID=4242 SLURM_ARRAY_TASK_ID=$i SLURM_ARRAY_TASK_MIN=$lo SLURM_ARRAY_TASK_COUNT=$((hi - lo + 1)) \
            bash -c "$wrap" || exit 1
    done
    echo "4242;cluster"
else
    SLURM_JOB_ID=4243 bash -c "$wrap"
    echo $? >"$STUB_RC"
    echo 4243
fi
SH
chmod +x stub/sbatch
export STUB_RC="$PWD/merge.rc"
PATH="$PWD/stub:$PATH" bash "$SRC/docker/slurm-shards.sh" "$PWD/train.jsonl" "$PWD/test.jsonl" "$PWD/reports" 4 \
    --embed lexical --cutoff 2026-07-01 >slurm.txt ||
    fail "slurm-shards.sh failed: $(cat slurm.txt)"
run_dir=$(ls -d reports/audit-*-4242 | grep -v '\.shards$')
[ "$(ls "$run_dir.shards")" = "$(printf '0\n1\n2\n3')" ] || fail "four shard folders expected: $(ls "$run_dir.shards")"
la audit --part train="$PWD/train.jsonl" --test "$PWD/test.jsonl" --embed lexical --cutoff 2026-07-01 -q --out slurm-full
[ "$(cat merge.rc)" -eq "$rc" ] || fail "the merge job should exit as the unsharded audit does ($rc): $(cat merge.rc)"
same_outputs slurm-full "$run_dir"

if "$LEAKAUDIT" models 2>/dev/null | grep -q "all-MiniLM-L6-v2 (default)"; then
    check "with the sentence encoder over long texts (windows), 3 shards merged write the same files"
    head -n 12 test.jsonl >mt.jsonl
    { head -n 30 dev.jsonl; grep '"quote2[4-7]' train.jsonl; grep '"near0[0-9]' dev.jsonl train.jsonl | cut -d: -f2-; } >md.jsonl
    M=(--dev md.jsonl --test mt.jsonl --threads 2 -q)
    la audit "${M[@]}" --out mfull
    model_rc=$rc
    python3 -c 'import json,sys; m=json.load(open("mfull/report.json"))["findings"]["semantic"]["model"]; assert m["texts_windowed"] > 0, m' ||
        fail "the long passages should be embedded as windows"
    for i in 0 1 2; do
        la audit "${M[@]}" --shard "$i/3" --out "ms/$i"
        expect_rc 0 "model shard $i"
    done
    la merge --out mmerged -q ms/0 ms/1 ms/2
    expect_rc "$model_rc" "model merge"
    same_outputs mfull mmerged
else
    echo "note: model all-MiniLM-L6-v2 is not installed; the encoder's shards are not compared"
fi
echo "ok"
