#!/usr/bin/env bash
# A gate that cannot pass on nothing: a forgotten --dev, a held-out side whose every row was
# rejected, and seen sides with no valid row all exit 2 with a message and write no report.
source "$(dirname "$0")/lib.bash"

cat >test.jsonl <<'J'
{"id":"t1","text":"How many legs do three spiders have?"}
{"id":"t2","text":"What is the boiling point of water at sea level in Celsius?"}
J
cat >dev.jsonl <<'J'
{"id":"d1","text":"Name the largest planet of the solar system."}
J
printf '{"id":"","text":"no id"}\n{"text":"no id either"}\n' >bad.jsonl

check "only the held-out side given (--dev forgotten): exit 2, nothing written"
la audit --test test.jsonl --out o1
expect_rc 2
expect_has err.txt "no seen partition has a valid row"
[ ! -e o1 ] || fail "o1 written"

check "every held-out row rejected under --on-invalid reject: exit 2"
la audit --dev dev.jsonl --test bad.jsonl --on-invalid reject --out o2
expect_rc 2
expect_has err.txt "test"
[ ! -e o2 ] || fail "o2 written"

check "every seen row rejected under --on-invalid reject: exit 2"
la audit --dev bad.jsonl --test test.jsonl --on-invalid reject --out o3
expect_rc 2
expect_has err.txt "no seen partition has a valid row"
[ ! -e o3 ] || fail "o3 written"

check "an empty held-out file: exit 2"
: >empty.jsonl
la audit --dev dev.jsonl --test empty.jsonl --out o4
expect_rc 2
[ ! -e o4 ] || fail "o4 written"

check "both sides present: the report counts the held-out rows compared"
la audit --dev dev.jsonl --test test.jsonl --out ok
expect_rc 0
[ "$(json_get ok/report.json 'j["findings"]["heldout_rows_compared"]')" = 2 ] || fail "2 held-out rows compared"
expect_has out.txt "2 of 2 held-out rows compared"
pass
