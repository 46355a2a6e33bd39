#!/usr/bin/env bash
# Field options as a user meets them on public data: a file without ids (GSM8K has none) gets
# stable ids FILE:LINE and the report says so; several --text-field options are joined with a
# newline; a dotted path reaches a nested chat message; partitions may come from a split field.
source "$(dirname "$0")/lib.bash"

cat >train.jsonl <<'J'
{"question":"Janet has 3 apples and buys 2 more. How many apples does she have?","answer":"5"}
{"question":"A train travels 60 km in 1 hour. How far in 3 hours?","answer":"180"}
J
cat >heldout.jsonl <<'J'
{"question":"Tom reads 10 pages a day. How many pages in a week?","answer":"70"}

{"question":"janet has 3 apples and buys 2 more.  How many apples does she have?","answer":"5"}
J

check "files without an id field get ids FILE:LINE (blank lines count)"
la audit --dev train.jsonl --test heldout.jsonl --text-field question --out gen
expect_rc 1
expect_has gen/pairs.jsonl '"id_a":"train.jsonl:1","split_a":"dev","id_b":"heldout.jsonl:3","split_b":"test"'
[ "$(json_get gen/report.json '[i["ids_generated"] for i in j["inputs"]]')" = "[True, True]" ] ||
    fail "report.json should say the ids were generated"

check "the generated ids are stable: a second run gives the same assignments"
la audit --dev train.jsonl --test heldout.jsonl --text-field question --out gen2
expect_same gen/assignments.jsonl gen2/assignments.jsonl

check "--text-field question --text-field answer: both fields must match"
sed 's/"answer":"5"}$/"answer":"five"}/' heldout.jsonl >heldout2.jsonl
la audit --dev train.jsonl --test heldout2.jsonl --text-field question --text-field answer --fail-on exact --out joined
expect_rc 0
expect_lacks joined/pairs.jsonl '"exact"'
la audit --dev train.jsonl --test heldout.jsonl --text-field question --text-field answer --fail-on exact --out joined2
expect_rc 1
expect_has joined2/pairs.jsonl '"id_a":"train.jsonl:1","split_a":"dev","id_b":"heldout.jsonl:3"'
python3 - joined2/test.jsonl <<'PY' || fail "the clean manifest should hold the original record"
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
assert rows == [{"question": "Tom reads 10 pages a day. How many pages in a week?", "answer": "70"}], rows
PY

check "--text-field messages.0.content reaches the first chat message"
cat >chat_dev.jsonl <<'J'
{"id":"c1","messages":[{"role":"user","content":"Translate 'cat' to French."},{"role":"assistant","content":"chat"}]}
{"id":"c2","messages":[{"role":"user","content":"What is 2+2?"},{"role":"assistant","content":"4"}]}
J
cat >chat_test.jsonl <<'J'
{"id":"e1","messages":[{"role":"user","content":"translate 'CAT' to french."},{"role":"assistant","content":"le chat"}]}
{"id":"e2","messages":[{"role":"user","content":"What is 3+3?"},{"role":"assistant","content":"4"}]}
J
la audit --dev chat_dev.jsonl --test chat_test.jsonl --text-field messages.0.content --fail-on exact --out chat
expect_rc 1
[ "$(grep -c '"exact"' chat/pairs.jsonl)" -eq 1 ] || fail "expected one exact pair"
expect_has chat/pairs.jsonl '"id_a":"c1","split_a":"dev","id_b":"e1","split_b":"test","kinds":["exact"'
la audit --dev chat_dev.jsonl --test chat_test.jsonl --text-field messages.1.content --fail-on exact --out chat1
expect_rc 1
expect_has chat1/pairs.jsonl '"id_a":"c2","split_a":"dev","id_b":"e2","split_b":"test","kinds":["exact"'

check "--id-field and a split field in the rows (one file, several partitions)"
cat >all.jsonl <<'J'
{"uid":"u1","split":"train","text":"Shared question"}
{"uid":"u2","split":"test","text":"shared   QUESTION"}
{"uid":"u3","split":"validation","text":"Only here"}
J
la audit all.jsonl --id-field uid --out parts
expect_rc 1
expect_has parts/pairs.jsonl '"id_a":"u1","split_a":"train","id_b":"u2","split_b":"test"'
[ -f parts/validation.jsonl ] || fail "no validation.jsonl manifest"
expect_has parts/validation.jsonl '"uid":"u3"'

check "--heldout names the protected side: the other partition becomes b"
la audit all.jsonl --id-field uid --heldout train --out parts2
expect_rc 1
expect_has parts2/pairs.jsonl '"id_a":"u2","split_a":"test","id_b":"u1","split_b":"train"'

check "--family-field and --date-field with --cutoff"
cat >fam_dev.jsonl <<'J'
{"id":"a","text":"Why was I charged twice?","topic":"billing","when":"2026-01-05"}
{"id":"b","text":"Where is my parcel?","topic":"shipping","when":"2026-01-06"}
J
cat >fam_test.jsonl <<'J'
{"id":"c","text":"Can I get an invoice in euros?","topic":"billing","when":"2026-08-01"}
J
la audit --dev fam_dev.jsonl --test fam_test.jsonl --family-field topic --date-field when --cutoff 2026-07-01 --out fam
expect_rc 1
expect_has fam/pairs.jsonl '"id_a":"a","split_a":"dev","id_b":"c","split_b":"test","kinds":["family"'
expect_has fam/dev.jsonl '"id":"b"'
la audit --dev fam_dev.jsonl --test fam_test.jsonl --date-field when --cutoff 2026-07-01 --out nofam
expect_rc 0
la audit --dev fam_dev.jsonl --test fam_test.jsonl --family-field topic --cutoff 2026-07-01 --fail-on time --out nodate
expect_rc 0
la audit --dev fam_dev.jsonl --test fam_test.jsonl --family-field topic --date-field when --cutoff 2026-01-06 --fail-on time --out late
expect_rc 1
expect_has late/assignments.jsonl '"id":"b","split_in":"dev","split_out":"quarantine"'

check "a '*' segment joins a chat row's turns; an array text field's reject says which path reads it"
cat >chat_dev.jsonl <<'J'
{"id":"w1","messages":[{"role":"system","content":"Be brief."},{"role":"user","content":"Tom has \"5\" pens\u0021"},{"role":"assistant","content":null,"tool_calls":[]}]}
{"id":"w2","messages":[]}
{"id":"w3","messages":[{"role":"user","content":7}]}
{"id":"w4","messages":"a plain string"}
{"id":"w5","conv":[{"turns":[{"text":"one"},{"text":"two"}]},{"turns":[{"text":"three"}]}]}
J
cat >chat_test.jsonl <<'J'
{"id":"e1","text":"Be brief.\nTom has \"5\" pens!"}
{"id":"e2","text":"one\ntwo\nthree"}
J
la audit --dev chat_dev.jsonl --test chat_test.jsonl --text-field dev=messages --out chat0
expect_rc 2
expect_has err.txt "chat_dev.jsonl:1: messages: expected a string, got an array of objects (--text-field 'messages.*.content' joins each one's content)"
la audit --dev chat_dev.jsonl --test chat_test.jsonl --text-field 'dev=messages.*.content' --normalize none --embed none \
    --near off --on-invalid reject --out chat1
expect_rc 1
expect_has chat1/pairs.jsonl '"id_a":"w1","split_a":"dev","id_b":"e1","split_b":"test","kinds":["exact"]'
expect_has chat1/rejects.jsonl "messages.*.content: missing; expected strings where the '*' reaches"
expect_has chat1/rejects.jsonl "messages.*.content: expected strings where the '*' reaches, got a number"
expect_has chat1/rejects.jsonl "messages.*.content: expected an array where the '*' stands, got a string"
[ "$(grep -c . chat1/rejects.jsonl)" = 4 ] || fail "w2, w3, w4 and w5 are the rejects"
la audit --dev chat_dev.jsonl --test chat_test.jsonl --text-field 'dev=conv.*.turns.*.text' --normalize none --embed none \
    --near off --on-invalid reject --out chat2
expect_rc 1
expect_has chat2/pairs.jsonl '"id_a":"w5","split_a":"dev","id_b":"e2","split_b":"test","kinds":["exact"]'

pass
