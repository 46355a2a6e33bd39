#!/usr/bin/env bash
# Inputs as data is stored: two id-less files with one base name in two folders get distinct ids
# (their paths from the folder that holds both); each partition can have its own fields
# (--text-field PART=FIELD); a folder or a pattern gives every file in it; a missing field names
# the keys the record has; a timestamp given as a date points to --date-format iso8601; report.json
# records the fields and the input format it read with.
source "$(dirname "$0")/lib.bash"

mkdir -p train test
printf '%s\n' '{"question":"Ann has 3 apples and buys 2 more. How many now?"}' \
    '{"question":"A car drives 60 km an hour for 3 hours. How far?"}' >train/data.jsonl
printf '%s\n' '{"question":"Tom reads 10 pages a day for a week. How many pages?"}' \
    '{"question":"ann has 3 apples and buys 2 more. how many now?"}' >test/data.jsonl

check "equal base names in two folders: ids train/data.jsonl:N and test/data.jsonl:N, no duplicate-id error"
la audit --dev train/data.jsonl --test test/data.jsonl --text-field question --embed none --out same
expect_rc 1
expect_lacks err.txt "duplicate id"
expect_has same/pairs.jsonl '"id_a":"train/data.jsonl:1","split_a":"dev","id_b":"test/data.jsonl:2","split_b":"test"'
expect_has same/assignments.jsonl '"id":"test/data.jsonl:1"'

check "a file above the other: the common folder is the upper one, in either order"
cp train/data.jsonl data.jsonl
la audit --dev test/data.jsonl --test data.jsonl --text-field question --embed none --out updown
expect_lacks err.txt "duplicate id"
expect_has updown/assignments.jsonl '"id":"test/data.jsonl:1"'
expect_has updown/assignments.jsonl '"id":"data.jsonl:1"'

check "files in one folder keep their base names as ids"
cp train/data.jsonl dev.jsonl
cp test/data.jsonl held.jsonl
la audit --dev dev.jsonl --test held.jsonl --text-field question --embed none --out flat
expect_rc 1
expect_has flat/pairs.jsonl '"id_a":"dev.jsonl:1","split_a":"dev","id_b":"held.jsonl:2"'

check "--text-field test=question: the held-out file has its own schema"
printf '%s\n' '{"id":"d1","text":"Ann has 3 apples and buys 2 more. How many now?"}' \
    '{"id":"d2","text":"Unrelated sentence about the weather."}' >dev_text.jsonl
printf '%s\n' '{"id":"q1","question":"ann has 3 apples and buys 2 more. How many now?","answer":"5"}' >test_q.jsonl
la audit --dev dev_text.jsonl --test test_q.jsonl --text-field test=question --embed none --out perpart
expect_rc 1
expect_has perpart/pairs.jsonl '"id_a":"d1","split_a":"dev","id_b":"q1","split_b":"test","kinds":["exact"'
[ "$(json_get perpart/report.json 'j["parameters"]["fields"]["by_partition"]')" = "{'test': {'text': ['question']}}" ] ||
    fail "report.json should record the per-partition text field"
[ "$(json_get perpart/report.json 'j["parameters"]["fields"]["text"]')" = "['text']" ] ||
    fail "report.json should record the text field of the other partitions"
la audit --dev dev_text.jsonl --test test_q.jsonl --text-field test=question --text-field test=answer --embed none \
    --fail-on exact --out perpart2
expect_rc 0
[ "$(json_get perpart2/report.json 'j["parameters"]["fields"]["by_partition"]["test"]["text"]')" = "['question', 'answer']" ] ||
    fail "both per-partition text fields"

check "a field option for a partition no input gives is a usage error that names it"
la audit --dev dev_text.jsonl --test test_q.jsonl --text-field tets=question --out typo
expect_rc 2
expect_has err.txt "names the partition 'tets', which no --part tets=FILE"

check "a folder and a quoted pattern for one partition"
mkdir -p shards/sub
printf '%s\n' '{"id":"s1","text":"Ann has 3 apples and buys 2 more. How many now?"}' >shards/a.jsonl
printf '%s\n' '{"id":"s2","text":"A car drives 60 km an hour for 3 hours. How far?"}' >shards/b.jsonl
printf '%s\n' 'id,text' 's3,Some other words entirely' >shards/sub/c.csv
echo "notes" >shards/README.txt
printf '%s\n' '{"id":"t1","text":"ann has 3 apples and buys 2 more. how many now?"}' >held2.jsonl
la audit --part dev=shards/ --test held2.jsonl --embed none --out folder
expect_rc 1
[ "$(json_get folder/report.json '[i["path"] for i in j["inputs"]]')" = "['shards/a.jsonl', 'shards/b.jsonl', 'shards/sub/c.csv', 'held2.jsonl']" ] ||
    fail "the folder's files in name order, README.txt left out: $(json_get folder/report.json '[i["path"] for i in j["inputs"]]')"
la audit --part 'dev=shards/*.jsonl' --test held2.jsonl --embed none --out glob
expect_rc 1
[ "$(json_get glob/report.json '[i["path"] for i in j["inputs"]]')" = "['shards/a.jsonl', 'shards/b.jsonl', 'held2.jsonl']" ] ||
    fail "the pattern's files"
la audit --part 'dev=shards/*.parquet' --test held2.jsonl --out none
expect_rc 2
expect_has err.txt "shards/*.parquet: no file matches the pattern"
mkdir empty
la audit --part dev=empty --test held2.jsonl --out none
expect_rc 2
expect_has err.txt "empty: the folder holds no .jsonl"

check "rows a folder holds in forms it does not read are left out with a warning, not silently"
printf 'PAR1\025\004' >shards/d.parquet
printf '\375\067zXZ\000' >shards/sub/e.jsonl.xz
echo "archived notes" >shards/notes.xz
printf '\037\213\010\000' >shards/sub/f.parquet.gz
la audit --part dev=shards/ --test held2.jsonl --embed none --out folder_warn
expect_rc 1
expect_has err.txt "warning: left out 3 files of the input folders holding rows it does not read, such as shards/d.parquet (Parquet)"
expect_has err.txt "to the Python package"
[ "$(json_get folder_warn/report.json '[i["path"] for i in j["inputs"]]')" = "['shards/a.jsonl', 'shards/b.jsonl', 'shards/sub/c.csv', 'held2.jsonl']" ] ||
    fail "the same inputs as before the Parquet and xz files"
la audit --part dev=shards/ --test held2.jsonl --embed none --out folder_warn -q
expect_rc 1
expect_lacks err.txt "warning"
mkdir -p parquet_only/sub
printf 'PAR1\025\004' >parquet_only/sub/train-00000.parquet
la audit --part dev=parquet_only --test held2.jsonl --out none
expect_rc 2
expect_has err.txt "parquet_only: the folder holds no .jsonl, .json, .csv or .tsv file (.gz and .zst included), only files leakaudit does not read, such as parquet_only/sub/train-00000.parquet (Parquet)"
rm shards/d.parquet shards/sub/e.jsonl.xz shards/sub/f.parquet.gz shards/notes.xz
mkdir -p packed_only
printf '\037\213\010\000' >packed_only/test-00000.parquet.gz
la audit --part dev=packed_only --test held2.jsonl --out none
expect_rc 2
expect_has err.txt "packed_only: the folder holds no .jsonl, .json, .csv or .tsv file (.gz and .zst included), only files leakaudit does not read, such as packed_only/test-00000.parquet.gz (Parquet)"

check "a missing text field lists the keys the record has"
la audit --dev dev_text.jsonl --test test_q.jsonl --out missing
expect_rc 2
expect_has err.txt "test_q.jsonl:1: text: missing; expected a string; the record has keys id, question, answer"
expect_has err.txt "--text-field PART=F"

check "an ISO timestamp as a date points to --date-format iso8601"
printf '%s\n' '{"id":"t9","text":"A dated row","available_on":"2026-03-04T10:20:30Z"}' >dated.jsonl
la audit --dev dev_text.jsonl --test dated.jsonl --cutoff 2026-01-01 --out dated
expect_rc 2
expect_has err.txt "got '2026-03-04T10:20:30Z': a timestamp; --date-format iso8601 accepts it"
la audit --dev dev_text.jsonl --test dated.jsonl --cutoff 2026-01-01 --date-format iso8601 --embed none --out dated2
expect_rc 0
[ "$(json_get dated2/report.json 'j["parameters"]["date_format"]')" = iso8601 ] || fail "date_format recorded"
la audit --dev dev_text.jsonl --test dated.jsonl --cutoff 2026-01-01T00:00:00Z --out dated3
expect_rc 2
expect_has err.txt "--cutoff 2026-01-01T00:00:00Z: expected a date YYYY-MM-DD that exists on the calendar (give the date part"

check "report.json records the fields and the input format"
python3 - perpart/report.json <<'PY' || fail "parameters.fields"
import json, sys
f = json.load(open(sys.argv[1]))["parameters"]["fields"]
assert f == {"id": "id", "text": ["text"], "split": "split", "family": "family", "date": "available_on",
             "label": "label", "score": "score", "format": "auto", "by_partition": {"test": {"text": ["question"]}}}, f
PY
pass
