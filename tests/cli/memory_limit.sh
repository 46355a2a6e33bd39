#!/usr/bin/env bash
# --memory-limit: the semantic tier embeds and searches the seen rows a batch at a time, holding
# the held-out vectors and one batch of seen ones. A small limit (many batches) writes the files
# the default (one batch here) writes, byte for byte (report.json apart from timings and the
# per-stage call counts), and so does the search over every vector at once (FAISS, where the build
# has it); the links across batches are found, ties between copies in different batches go to the
# lower row; shards under the small limit merge to the same files; rows whose text is kept in a
# spill file (from the start, or from when compressed inputs have been read that far) give the
# same files; bad values are refused.
source "$(dirname "$0")/lib.bash"

# 6,300 rows: 300 held out, 6,000 seen in two partitions (the stream holds 2,048 seen rows at the
# smallest limit, so three batches); reworded held-out rows spread over every batch, and seen rows
# that are copies of each other in different batches (equal cosines).
python3 - <<'PY'
import json, random
rnd = random.Random(5)
words = ("apple river stone cloud market teacher window garden number silver engine paper forest "
         "bridge letter yellow camera doctor island kitchen ladder mirror needle orange pocket "
         "rabbit saddle ticket violin wagon basket candle dinner feather guitar hammer jacket "
         "lemon magnet nickel oyster pepper quiet rocket shadow tunnel velvet whistle").split()
def sentence(n):
    return " ".join(rnd.choice(words) for _ in range(n)).capitalize() + "."
test = [{"id": "t%03d" % i, "text": sentence(16) + " " + sentence(9)} for i in range(300)]
seen = [{"id": "s%04d" % i, "text": sentence(14) + " " + sentence(11)} for i in range(6000)]
for k in range(60):  # a reworded copy of test row k at seen position 97 k: every batch has some
    w = test[k]["text"].split()
    for _ in range(3):
        w[rnd.randrange(len(w))] = rnd.choice(words)
    seen[97 * k + 13]["text"] = " ".join(w)
for k in range(60, 70):  # the same reworded copy twice, 3,000 rows apart: a tie across batches
    w = test[k]["text"].split()
    w[0] = "Ladder"
    seen[100 + k]["text"] = seen[3100 + k]["text"] = " ".join(w)
with open("test.jsonl", "w") as f:
    for r in test:
        f.write(json.dumps(r) + "\n")
with open("dev.jsonl", "w") as f, open("train.jsonl", "w") as g:
    for i, r in enumerate(seen):
        (f if i % 5 < 3 else g).write(json.dumps(r) + "\n")
PY

A=(--part dev=dev.jsonl --part train=train.jsonl --test test.jsonl --embed lexical --threads 2)

check "the default run finds the reworded rows of every batch"
la audit "${A[@]}" -q --out whole
expect_rc 1 "default"
python3 - whole/pairs.jsonl whole/nearest.jsonl <<'PY' || fail "the planted rewordings should be linked"
import json, sys
pairs = [json.loads(l) for l in open(sys.argv[1])]
ids = {(p["id_a"], p["id_b"]) for p in pairs if "semantic" in p["kinds"]}
ids |= {(b, a) for a, b in ids}
for k in range(60):
    assert ("s%04d" % (97 * k + 13), "t%03d" % k) in ids, k
for k in range(60, 70):  # both copies linked; the nearest is the lower row
    assert ("s%04d" % (100 + k), "t%03d" % k) in ids and ("s%04d" % (3100 + k), "t%03d" % k) in ids, k
near = {json.loads(l)["id"]: json.loads(l)["nearest"] for l in open(sys.argv[2])}
for k in range(60, 70):
    assert near["t%03d" % k] == "s%04d" % (100 + k), (k, near["t%03d" % k])
PY

check "--memory-limit 16M: three batches of seen vectors, the same files"
la audit "${A[@]}" --memory-limit 16M -q --out small
expect_rc 1 "--memory-limit 16M"
same_outputs whole small
tiles() { json_get "$1/report.json" "j['findings']['semantic']['stages']['semantic_tiles']['calls']"; }
[ "$(tiles whole)" = 1 ] && [ "$(tiles small)" = 3 ] ||
    fail "the tiles should run once per batch: $(tiles whole) call(s) by default, $(tiles small) at 16M"

check "the seen rows embedded 1,700 at a time (four calls into one buffer, the last shorter): the same files"
LEAKAUDIT_EMBED_ROWS=1700 la audit "${A[@]}" -q --out calls
expect_rc 1 "LEAKAUDIT_EMBED_ROWS=1700"
same_outputs whole calls
LEAKAUDIT_EMBED_ROWS=1700 la audit "${A[@]}" --memory-limit 16M -q --out calls_small
expect_rc 1 "LEAKAUDIT_EMBED_ROWS=1700 --memory-limit 16M"
same_outputs whole calls_small

if la audit "${A[@]}" --semantic-method faiss -q --out flat && [ "$rc" -eq 1 ]; then
    check "every vector at once (FAISS flat) links the same rows with the same cosines"
    same_outputs whole flat no-report
else
    grep -q "no FAISS" err.txt || fail "--semantic-method faiss: $(cat err.txt)"
    echo "note: this build has no FAISS; the whole-matrix comparison is left out"
fi

check "two shards under the small limit merge to the default run's files"
for i in 0 1; do
    la audit "${A[@]}" --memory-limit 16M --shard "$i/2" -q --out "s/$i"
    expect_rc 0 "shard $i/2"
done
la merge --out merged s/0 s/1 -q
expect_rc 1 "merge"
same_outputs whole merged

if "$LEAKAUDIT" models 2>/dev/null | grep -q "all-MiniLM-L6-v2 (default)"; then
    check "the encoder streamed, with long texts as windows, links what it links over every vector at once"
    # --cache keeps every vector of the run (for its file): the search over all of them at once
    python3 - <<'PY'
import json, random
rnd = random.Random(8)
words = "apple river stone cloud market teacher window garden number silver engine paper forest".split()
def sentence(n):
    return " ".join(rnd.choice(words) for _ in range(n)).capitalize() + "."
test = [{"id": "q%02d" % i, "text": "How many %s does the %s need before the %s opens?" % tuple(rnd.sample(words, 3))}
        for i in range(30)]
seen = [{"id": "p%02d" % i, "text": " ".join(sentence(12) for _ in range(25))} for i in range(24)]
for k in range(8):  # a held-out question inside a long passage: only a window matches it
    seen[k]["text"] += " " + test[k]["text"] + " " + " ".join(sentence(12) for _ in range(10))
seen += [{"id": "s%02d" % i, "text": sentence(10)} for i in range(40)]
for name, rows in (("wtest", test), ("wseen", seen)):
    with open(name + ".jsonl", "w") as f:
        for r in rows:
            f.write(json.dumps(r) + "\n")
PY
    W=(--dev wseen.jsonl --test wtest.jsonl --near off --embed model --threads 2 -q)
    la audit "${W[@]}" --memory-limit 16M --out wstream
    expect_rc 1 "the encoder, streamed"
    la audit "${W[@]}" --cache wcache --out wwhole
    expect_rc 1 "the encoder, every vector at once"
    for f in pairs.jsonl clusters.jsonl assignments.jsonl nearest.jsonl; do expect_same wwhole/$f wstream/$f; done
    [ "$(json_get wstream/report.json "j['findings']['semantic']['model']['texts_windowed']")" -ge 8 ] ||
        fail "the long passages should be embedded as windows"
    grep -q '"p00"' wstream/pairs.jsonl || fail "the question inside a long passage should be linked"
fi

check "the rows' text in a spill file (as for inputs larger than a sixteenth of the limit): the same files"
LEAKAUDIT_SPILL=1 la audit "${A[@]}" --progress always --out spilled
expect_rc 1 "text spilled"
expect_has err.txt "in a spill file in"
same_outputs whole spilled
[ -z "$(ls "${TMPDIR:-/var/tmp}" | grep leakaudit-spill)" ] || fail "the spill file should be gone (it is unlinked at once)"

check "compressed inputs, whose size says too little, spill once their rows pass a sixteenth of the limit"
gzip -k -f dev.jsonl train.jsonl
Z=(--part dev=dev.jsonl.gz --part train=train.jsonl.gz --test test.jsonl --embed lexical --threads 2 --memory-limit 16M)
[ "$(cat dev.jsonl.gz train.jsonl.gz test.jsonl | wc -c)" -lt 1048576 ] || fail "the inputs should be under 1 MiB as stored"
la audit "${Z[@]}" --progress always --out zspilled
expect_rc 1 "compressed, spilled as read"
expect_has err.txt "in a spill file in"
LEAKAUDIT_SPILL=0 la audit "${Z[@]}" --progress always --out zmemory
expect_rc 1 "compressed, in memory"
expect_lacks err.txt "in a spill file in"
same_outputs zmemory zspilled
expect_same small/pairs.jsonl zspilled/pairs.jsonl
expect_same small/dev.jsonl zspilled/dev.jsonl

check "a spill directory that cannot hold the file is an error naming it, and nothing is written"
LEAKAUDIT_SPILL=1 TMPDIR="$PWD/no/such/dir" la audit "${A[@]}" --out nospill
expect_rc 2 "spill into a missing directory"
expect_has err.txt "$PWD/no/such/dir: cannot make a spill file for the row text"
[ ! -e nospill ] || fail "no output should be written when the spill file cannot be made"

check "bad --memory-limit values are refused before any work"
for bad in 1M 0 abc 12Q; do
    la audit "${A[@]}" --memory-limit "$bad" --out bad
    expect_rc 2 "--memory-limit $bad"
    expect_has err.txt "--memory-limit $bad"
    [ ! -e bad ] || fail "no output should be written for --memory-limit $bad"
done

pass
