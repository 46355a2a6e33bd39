#!/usr/bin/env bash
# --cache DIR: the encoder's vectors kept between runs. A run without the cache, a run with an
# empty cache and a run with a full one write byte-identical pairs, clusters and assignments; the
# report counts hits and misses; a second run with one row changed computes only that row; a
# damaged cache file is ignored with a note (and rewritten), never read. Needs the default model
# (exit 77 without it).
source "$(dirname "$0")/lib.bash"

if ! "$LEAKAUDIT" models 2>/dev/null | grep -q "all-MiniLM-L6-v2 (default)"; then
    echo "skipped: model all-MiniLM-L6-v2 is not installed (scripts/install-deps.sh installs it)"
    exit 77
fi
# 60 seen questions, and 10 more that reword held-out ones (so there are links to keep)
head -n 20 "$SRC/examples/gsm8k/test.jsonl" >test.jsonl
{ head -n 60 "$SRC/examples/gsm8k/dev.jsonl"
  head -n 10 test.jsonl | python3 -c '
import json, sys
for line in sys.stdin:
    r = json.loads(line)
    print(json.dumps({"id": "re-" + r["id"], "question": "Tell me: " + r["question"].replace(" ", "  ", 1)}))'
} >dev.jsonl
A=(--dev dev.jsonl --test test.jsonl --text-field question --threads 2 -q)
cache_of() { python3 -c 'import json,sys; c=json.load(open(sys.argv[1]))["findings"]["semantic"]["model"]["cache"]; print(c["hits"], c["misses"], c["note"])' "$1/report.json"; }

check "no cache, cold cache and warm cache give the same outputs"
la audit "${A[@]}" --out plain
la audit "${A[@]}" --out cold --cache c
[ "$(cache_of cold)" = "0 90 " ] || fail "a cold cache should miss all 90 rows: $(cache_of cold)"
la audit "${A[@]}" --out warm --cache c
[ "$(cache_of warm)" = "90 0 " ] || fail "a warm cache should hit all 90 rows: $(cache_of warm)"
[ "$(grep -c '"semantic"' plain/pairs.jsonl)" -ge 10 ] || fail "the reworded rows should be semantic links"
for f in pairs.jsonl clusters.jsonl assignments.jsonl; do
    expect_same plain/$f cold/$f
    expect_same plain/$f warm/$f
done

check "a changed row is the only miss"
sed -i '1s/"question": "/"question": "Changed: /' dev.jsonl
la audit "${A[@]}" --out one --cache c
[ "$(cache_of one)" = "89 1 " ] || fail "one changed row should be the only miss: $(cache_of one)"
la audit "${A[@]}" --out one_plain
for f in pairs.jsonl clusters.jsonl assignments.jsonl; do expect_same one_plain/$f one/$f; done

check "a damaged cache file is ignored with a note and rewritten"
f=$(ls c/embed-*.lacache)
printf 'X' | dd of="$f" bs=1 seek=100 conv=notrunc 2>/dev/null
la audit "${A[@]}" --out damaged --cache c
cache_of damaged | grep -q "^0 90 the cache file .* was ignored (its checksum does not match" ||
    fail "a damaged cache should be ignored with a note: $(cache_of damaged)"
for f in pairs.jsonl clusters.jsonl assignments.jsonl; do expect_same one_plain/$f damaged/$f; done
la audit "${A[@]}" --out again --cache c
[ "$(cache_of again)" = "90 0 " ] || fail "the rewritten cache should hit every row: $(cache_of again)"

check "--cache on a file that is not a folder is an error"
touch notdir
la audit "${A[@]}" --out bad --cache notdir
expect_rc 2
expect_has err.txt "--cache notdir: not a folder"
pass
