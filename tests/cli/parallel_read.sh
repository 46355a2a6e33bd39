#!/usr/bin/env bash
# Reading JSONL on worker threads: inputs large enough to be cut into many chunks give
# byte-identical outputs at --threads 1, 2 and 8 (report.json less its timings), with rejects,
# duplicate ids, generated ids and embeddings whose checks depend on the rows before them; and a
# bad line deep in a file, or a --max-rows overrun, gives the same message at every thread count.
# The same for a file read a block at a time (LEAKAUDIT_READ_BLOCK: blocks of 4,000 and 1,000
# bytes, so that lines straddle blocks and a line of 2 KB is longer than one) against every file
# read whole (LEAKAUDIT_READ_BLOCK=0), with the files' fingerprints (BLAKE2b-256, hashed beside the
# parse) checked against Python's, plain, gzip (two members) and zstd (two frames), and a
# truncated compressed file failing with the same message either way; and standard input, read a
# block at a time or, when the first block says it must be (compressed, no ids), whole. Plain files
# are mapped into memory, not read, unless LEAKAUDIT_READ_MAP=0: both ways give the same files and
# failures, for a file of whole pages without a newline at its end too.
source "$(dirname "$0")/lib.bash"

python3 - <<'PY'
import json, random
rnd = random.Random(13)
words = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india", "juliet",
         "kilo", "lima", "mike", "november", "oscar", "papa", "quebec", "romeo", "sierra", "tango",
         "caf\u00e9", "na\u00efve", "\u00c5ngstr\u00f6m", "\u6f22\u5b57", "\u0441\u043b\u043e\u0432\u043e"]
def sentence(n):
    return " ".join(rnd.choice(words) for _ in range(n))
def line(obj):
    return json.dumps(obj, ensure_ascii=rnd.random() < 0.5)

test = [{"id": "t%d" % i, "text": sentence(40), "label": str(i % 3)} for i in range(2000)]
bad = {  # line number in dev.jsonl -> what stands there instead of a row
    17: '{"id": "x17", "text": "unterminated',
    4000: '[1, 2, 3]',
    6001: '{"id": "x6001", "text": 5}',
    9000: b'{"id": "x9000", "text": "bad \xff byte"}',
    12000: '{"id": "x12000", "text": "t", "available_on": "2026-02-30"}',
    15000: '{"id": "x15000", "text": "NaN score", "score": NaN}',
    19000: '{"id": "x19000", "text": "t", "id": "again"}',
    19999: '{"id": "x19999", "text": "' + "long " * 400 + '"}',
}
with open("dev.jsonl", "wb") as f:
    for i in range(1, 20001):
        if i in bad:
            b = bad[i]
            f.write((b if isinstance(b, bytes) else b.encode()) + b"\n")
        elif i % 997 == 0:
            f.write(b"\n")                                       # a blank line
        elif i % 1499 == 0:                                      # a duplicate id, rows apart
            f.write(line({"id": "d%d" % (i - 700), "text": sentence(30)}).encode() + b"\n")
        elif i % 53 == 0:                                        # copies of held-out rows
            t = test[i % len(test)]
            f.write(line({"id": "d%d" % i, "text": t["text"].upper()}).encode() + b"\r\n")
        else:
            f.write(line({"id": "d%d" % i, "text": sentence(rnd.randint(20, 60)), "label": str(i % 5),
                          "available_on": "2025-%02d-%02d" % (1 + i % 12, 1 + i % 28)}).encode() + b"\n")
with open("test.jsonl", "w") as f:
    for i, t in enumerate(test):
        if i == 1500:
            t = dict(t, id="d1200")                              # an id the dev side has
        f.write(line(t) + "\n")
# no id field anywhere: ids are generated from the file name and the line
with open("extra.jsonl", "w") as f:
    for i in range(6000):
        f.write(line({"text": sentence(rnd.randint(20, 50))}) + "\n")
# embeddings: the first rows' vectors are bad, so a later one fixes the length all must have;
# the text at a dotted path
with open("vdev.jsonl", "w") as f, open("vtest.jsonl", "w") as g:
    for i in range(8000):
        vec = [rnd.uniform(-1, 1) for _ in range(4)]
        if i < 3: vec = [0, 0, 0, 0]
        elif i % 1000 == 7: vec = vec[:3]
        elif i % 1000 == 11: vec = vec[:2] + ["x", 1]
        f.write(line({"id": "v%d" % i, "body": {"text": sentence(30)}, "vec": vec}) + "\n")
    for i in range(200):
        g.write(line({"id": "w%d" % i, "body": {"text": sentence(30)}, "vec": [rnd.uniform(-1, 1) for _ in range(4)]}) + "\n")
PY

check "the inputs are cut into many chunks (of 256 KiB)"
[ "$(stat -c %s dev.jsonl)" -gt $((16 * 262144)) ] || fail "dev.jsonl is too small to split into 16 chunks"
[ "$(stat -c %s extra.jsonl)" -gt $((4 * 262144)) ] || fail "extra.jsonl is too small to split into 4 chunks"
[ "$(stat -c %s vdev.jsonl)" -gt $((4 * 262144)) ] || fail "vdev.jsonl is too small to split into 4 chunks"

# without_timings IN OUT: report.json less its timings line
without_timings() { grep -v '^  "timings": ' "$1" >"$2"; }

# same_outputs A B: every file of audit output A is in B and byte-identical (report.json less timings),
# .leakaudit-manifest too (files are written on two threads, finishing in any order)
same_outputs() {
    local f n=0
    expect_same "$1/.leakaudit-manifest" "$2/.leakaudit-manifest"
    for f in "$1"/*; do
        f=$(basename "$f")
        [ -e "$2/$f" ] || fail "$2 lacks $f"
        if [ "$f" = report.json ]; then
            expect_has "$1/$f" '"timings": '
            without_timings "$1/$f" a.json
            without_timings "$2/$f" b.json
            expect_same a.json b.json
        else
            expect_same "$1/$f" "$2/$f"
        fi
        n=$((n + 1))
    done
    [ "$n" -eq "$(ls "$2" | wc -l)" ] || fail "$2 holds files $1 does not"
}

check "an audit with rejects, duplicates and generated ids writes the same files at 1, 2 and 8 threads"
for t in 1 2 8; do
    la audit --dev dev.jsonl --part extra=extra.jsonl --test test.jsonl --on-invalid reject --embed none \
        --max-row-bytes 1500 --threads "$t" --out "out$t"
    expect_rc 1
done
python3 - out1 <<'PY' || fail "the run at one thread is not the one planted"
import json, sys
rej = [json.loads(l) for l in open(sys.argv[1] + "/rejects.jsonl")]
lines = sorted((r["file"].split("/")[-1], r["line"]) for r in rej)
dev = [l for f, l in lines if f == "dev.jsonl"]
# the planted bad lines, the duplicates, and the held-out row reusing a dev id
assert set([17, 4000, 6001, 9000, 12000, 15000, 19000, 19999]) <= set(dev), dev
assert all(l in dev for l in range(1499, 20001, 1499)), dev
assert ("test.jsonl", 1501) in lines, lines
long = [r for r in rej if r["line"] == 19999][0]
assert "over the limit of 1500 (--max-row-bytes)" in " ".join(long["reasons"]), long
report = json.load(open(sys.argv[1] + "/report.json"))
assert report["findings"]["pairs_by_kind"]["exact"] > 300, report["findings"]["pairs_by_kind"]
ids = [json.loads(l)["id"] for l in open(sys.argv[1] + "/assignments.jsonl")]
assert "extra.jsonl:6000" in ids and "extra.jsonl:1" in ids
PY
same_outputs out1 out2
same_outputs out1 out8

check "read a block at a time, or whole: the same files, the same failures"
for blk in 0 4000 1000; do
    LEAKAUDIT_READ_BLOCK=$blk la audit --dev dev.jsonl --part extra=extra.jsonl --test test.jsonl --on-invalid reject \
        --embed none --max-row-bytes 1500 --threads 2 --out "blk$blk"
    expect_rc 1
    [ "$blk" = 0 ] || same_outputs blk0 "blk$blk"
    [ "$blk" != 4000 ] || continue # the failures: whole and in the smallest blocks
    LEAKAUDIT_READ_BLOCK=$blk la audit --dev dev.jsonl --test test.jsonl --embed none --max-rows 4321 --threads 2 \
        --out "blkmax$blk"
    expect_rc 2
    mv err.txt "blkmax$blk.txt"
    LEAKAUDIT_READ_BLOCK=$blk la audit --dev dev.jsonl --test test.jsonl --embed none --threads 2 --out "blkbad$blk"
    expect_rc 2
    mv err.txt "blkbad$blk.txt"
done
same_outputs blk0 out1
# read rather than mapped (LEAKAUDIT_READ_MAP=0): blocks read into buffers, the next one beside the parse
for blk in 4000 1000; do
    LEAKAUDIT_READ_MAP=0 LEAKAUDIT_READ_BLOCK=$blk la audit --dev dev.jsonl --part extra=extra.jsonl --test test.jsonl \
        --on-invalid reject --embed none --max-row-bytes 1500 --threads 2 --out "rblk$blk"
    expect_rc 1
    same_outputs blk0 "rblk$blk"
done
LEAKAUDIT_READ_MAP=0 LEAKAUDIT_READ_BLOCK=1000 la audit --dev dev.jsonl --test test.jsonl --embed none --max-rows 4321 \
    --threads 2 --out rblkmax
expect_rc 2
expect_same blkmax0.txt err.txt
LEAKAUDIT_READ_MAP=0 la audit --dev dev.jsonl --test test.jsonl --embed none --threads 2 --out rblkbad
expect_rc 2
expect_same blkbad0.txt err.txt
expect_has blkmax0.txt 'dev.jsonl:4326: record: more than 4321 rows in one input'
expect_same blkmax0.txt blkmax1000.txt
expect_has blkbad0.txt 'dev.jsonl:17: record: expected one JSON object per line'
expect_same blkbad0.txt blkbad1000.txt

check "windows of one chunk, each committed beside the next one's parse, and the next block read beside it"
# LEAKAUDIT_READ_WINDOW=1: a window a chunk, so every window but a block's last is committed on
# whichever thread takes that item of the next window's loop; blocks of 300 KB, so each block is
# read while the one before it is parsed
LEAKAUDIT_READ_WINDOW=1 LEAKAUDIT_READ_BLOCK=300000 la audit --dev dev.jsonl --part extra=extra.jsonl \
    --test test.jsonl --on-invalid reject --embed none --max-row-bytes 1500 --threads 2 --out win1
expect_rc 1
same_outputs blk0 win1
LEAKAUDIT_READ_WINDOW=1 LEAKAUDIT_READ_BLOCK=300000 la audit --dev dev.jsonl --test test.jsonl --embed none \
    --max-rows 4321 --threads 2 --out winmax
expect_rc 2
expect_same blkmax0.txt err.txt
printf '\xef\xbb\xbf{"id": "b1", "text": "a row after a byte order mark"}\r\n{"id": "b2", "text": "and the last line has no newline"}' >bom.jsonl
for blk in 0 4000 70; do
    LEAKAUDIT_READ_BLOCK=$blk la audit --dev bom.jsonl --test test.jsonl --embed none --near off --out "bom$blk"
    expect_rc 0
    [ "$blk" = 0 ] || same_outputs bom0 "bom$blk"
done
expect_has bom0/dev.jsonl 'and the last line has no newline'
# a file of exactly two pages whose last line has no newline: mapped, the byte after its end is
# past the file's last page
python3 - <<'PY'
line = '{"id": "p%d", "text": "%s"}\n'
out, i = "", 0
while len(out) + len(line % (i, "w" * 40)) < 8192 - 60:
    out += line % (i, "w" * 40)
    i += 1
last = '{"id": "end", "text": "'
out += last + "z" * (8192 - len(out) - len(last) - 2) + '"}'
assert len(out) == 8192 and not out.endswith("\n")
open("pages.jsonl", "w").write(out)
PY
for map in 1 0; do
    LEAKAUDIT_READ_MAP=$map la audit --dev pages.jsonl --test test.jsonl --embed none --near off --out "pages$map"
    expect_rc 0
done
same_outputs pages1 pages0
expect_has pages1/dev.jsonl '"id": "end"'

check "the fingerprint of a file read a block at a time (hashed beside the parse) is its BLAKE2b-256"
# blocks of 4,000 bytes: the first is hashed as it is read, the rest window by window on a worker
for t in 1 3; do
    LEAKAUDIT_READ_BLOCK=4000 la audit --dev dev.jsonl --part extra=extra.jsonl --test bom.jsonl --on-invalid reject \
        --embed none --near off --threads "$t" --out "fp$t"
    expect_rc 0
    python3 - "fp$t/report.json" <<'PY' || fail "a fingerprint is not the file's BLAKE2b-256 at --threads $t"
import hashlib, json, sys
inputs = json.load(open(sys.argv[1]))["inputs"]
assert len(inputs) == 3, inputs
for i in inputs:
    want = hashlib.blake2b(open(i["path"], "rb").read(), digest_size=32).hexdigest()
    assert i["blake2b_256"] == want, (i["path"], i["blake2b_256"], want)
PY
done

check "gzip and zstd read a block at a time as they decompress, or whole: the same files, the same failures"
# two gzip members and two zstd frames, the second starting inside a line
python3 - <<'PY'
import gzip
data = open("dev.jsonl", "rb").read()
cut = len(data) // 2 + 17
open("dev.jsonl.gz", "wb").write(gzip.compress(data[:cut]) + gzip.compress(data[cut:]))
open("cut.gz", "wb").write(gzip.compress(data)[:-4000])
PY
have_zstd=0
if command -v zstd >/dev/null; then
    have_zstd=1
    head -c 300017 dev.jsonl | zstd -q -f -o part1.zst
    tail -c +300018 dev.jsonl | zstd -q -f -o part2.zst
    cat part1.zst part2.zst >dev.jsonl.zst
    head -c -3000 dev.jsonl.zst >cut.zst
fi
for z in gz zst; do
    [ "$z" = gz ] || [ "$have_zstd" = 1 ] || continue
    for blk in 0 4000 1000; do
        LEAKAUDIT_READ_BLOCK=$blk la audit --dev dev.jsonl.$z --test test.jsonl --on-invalid reject --embed none \
            --max-row-bytes 1500 --threads 2 --out "$z$blk"
        expect_rc 1
        [ "$blk" = 0 ] || same_outputs "${z}0" "$z$blk"
        LEAKAUDIT_READ_BLOCK=$blk la audit --dev dev.jsonl.$z --test test.jsonl --embed none --max-rows 4321 --out "${z}max$blk"
        expect_rc 2
        mv err.txt "${z}max$blk.txt"
        cp "cut.$z" "cut$blk.jsonl.$z"
        LEAKAUDIT_READ_BLOCK=$blk la audit --dev "cut$blk.jsonl.$z" --test test.jsonl --on-invalid reject --embed none \
            --max-row-bytes 1500 --out "${z}cut$blk"
        expect_rc 2
        [ ! -e "${z}cut$blk" ] || fail "--out written for a truncated .$z file"
        sed "s/cut$blk/cut/" err.txt >"${z}cut$blk.txt"
    done
    expect_has "${z}max0.txt" 'dev.jsonl.'"$z"':4326: record: more than 4321 rows in one input'
    expect_same "${z}max0.txt" "${z}max1000.txt"
    expect_same "${z}cut0.txt" "${z}cut4000.txt"
    expect_same "${z}cut0.txt" "${z}cut1000.txt"
    cmp -s blk0/pairs.jsonl "${z}0/pairs.jsonl" || fail "the .$z file's pairs are not the plain file's"
    expect_same blk0/dev.jsonl "${z}0/dev.jsonl"
done
expect_has gzcut0.txt 'cut.jsonl.gz: corrupt or truncated gzip data'
[ "$have_zstd" = 0 ] || expect_has zstcut0.txt 'cut.jsonl.zst: truncated zstd data'

check "standard input read a block at a time, or whole when it must be (no ids in the first block, compressed)"
for blk in 0 4000 1000; do
    LEAKAUDIT_READ_BLOCK=$blk la audit --dev - --test test.jsonl --on-invalid reject --embed none --max-row-bytes 1500 \
        --threads 2 --out "in$blk" <dev.jsonl
    expect_rc 1
    LEAKAUDIT_READ_BLOCK=$blk la audit --dev - --test test.jsonl --on-invalid reject --embed none --max-row-bytes 1500 \
        --threads 2 --out "inx$blk" <extra.jsonl
    expect_rc 0
    LEAKAUDIT_READ_BLOCK=$blk la audit --dev - --test test.jsonl --on-invalid reject --embed none --max-row-bytes 1500 \
        --threads 2 --out "ingz$blk" <dev.jsonl.gz
    expect_rc 1
    LEAKAUDIT_READ_BLOCK=$blk la audit --dev - --test test.jsonl --embed none --max-rows 4321 --out "inmax$blk" <dev.jsonl
    expect_rc 2
    mv err.txt "inmax$blk.txt"
    [ "$blk" = 0 ] && continue
    same_outputs in0 "in$blk"
    same_outputs inx0 "inx$blk"
    same_outputs ingz0 "ingz$blk"
    expect_same inmax0.txt "inmax$blk.txt"
done
expect_has inmax0.txt '-:4326: record: more than 4321 rows in one input'
expect_same blk0/pairs.jsonl in0/pairs.jsonl
expect_same blk0/dev.jsonl in0/dev.jsonl
expect_same in0/pairs.jsonl ingz0/pairs.jsonl

check "embedding checks that depend on the rows before them come out the same at 1, 2 and 8 threads"
for t in 1 2 8; do
    la audit --dev vdev.jsonl --test vtest.jsonl --near off --embedding-field vec --text-field body.text --on-invalid reject \
        --threads "$t" --out "vout$t"
    [ "$rc" -le 1 ] || fail "expected exit 0 or 1, got $rc"
done
expect_has vout1/rejects.jsonl 'vec: expected 4 numbers as in the first row, got 3'
expect_has vout1/rejects.jsonl 'vec: vector is all zeros'
expect_has vout1/rejects.jsonl 'vec: element 2: expected a number, got a string'
[ "$(json_get vout1/report.json 'j["counts"]["rows_placed"]')" -gt 8000 ] || fail "the rows' text at body.text was not found"
same_outputs vout1 vout2
same_outputs vout1 vout8

check "without --on-invalid reject the problems are listed from the first line on, the same at every thread count"
for t in 1 2 8; do
    la audit --dev dev.jsonl --test test.jsonl --embed none --threads "$t" --out "bad$t"
    expect_rc 2
    [ ! -e "bad$t" ] || fail "--out written at $t threads"
    mv err.txt "err$t.txt"
done
head -n 1 err1.txt >first.txt
expect_has first.txt 'dev.jsonl:17: record: expected one JSON object per line'
expect_same err1.txt err2.txt
expect_same err1.txt err8.txt

check "a bad line deep in a file is named with its line at every thread count"
python3 - <<'PY'
lines = open("extra.jsonl").read().split("\n")
lines[5199] = '{"text": "an object cut short'
open("deep.jsonl", "w").write("\n".join(lines))
PY
for t in 1 2 8; do
    la audit --dev deep.jsonl --test test.jsonl --embed none --threads "$t" --out "deep$t"
    expect_rc 2
    mv err.txt "deep$t.txt"
done
expect_has deep1.txt 'deep.jsonl:5200: record: expected one JSON object per line'
expect_same deep1.txt deep2.txt
expect_same deep1.txt deep8.txt

check "--max-rows stops at the same row at every thread count"
for t in 1 2 8; do
    la audit --dev dev.jsonl --test test.jsonl --embed none --max-rows 4321 --threads "$t" --out "max$t"
    expect_rc 2
    mv err.txt "max$t.txt"
done
expect_has max1.txt 'dev.jsonl:4326: record: more than 4321 rows in one input' # 4 blank lines before it
expect_same max1.txt max2.txt
expect_same max1.txt max8.txt

pass
