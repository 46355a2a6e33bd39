#!/usr/bin/env bash
# Each kind of bad input named in the acceptance (duplicate id, empty id, 2026-7-1, 2026-02-30,
# missing text, invalid UTF-8, unknown partition) stops the run: exit 2, a FILE:LINE: FIELD message
# on stderr, and --out untouched (a previous report stays byte-identical, a new directory is not
# created, nothing is left beside it).
source "$(dirname "$0")/lib.bash"

cat >dev.jsonl <<'J'
{"id":"d1","text":"How many legs does a spider have?"}
{"id":"d2","text":"What is the boiling point of water?"}
J
cat >test.jsonl <<'J'
{"id":"t1","text":"Name the largest planet."}
{"id":"t2","text":"Who wrote Hamlet?"}
J

check "a clean audit writes the previous report into prev/"
la audit --dev dev.jsonl --test test.jsonl --out prev
expect_rc 0
[ -f prev/report.json ] || fail "no prev/report.json"
tree_digest prev >prev.digest

# bad_case NAME EXPECTED-MESSAGE ARGS...: the audit fails as described and touches nothing.
bad_case() {
    local name=$1 msg=$2
    shift 2
    check "$name: exit 2 and '$msg'"
    la audit "$@" --out prev
    expect_rc 2 "$name"
    expect_has err.txt "leakaudit: $msg"
    expect_has err.txt "nothing written"
    tree_digest prev >after.digest
    cmp -s prev.digest after.digest || fail "$name: the previous report in prev/ changed"
    no_leftovers prev
    check "$name: a new --out directory is not created"
    la audit "$@" --out "new-$name"
    expect_rc 2 "$name"
    [ ! -e "new-$name" ] || fail "$name: new-$name was created"
    no_leftovers "new-$name"
}

printf '%s\n' '{"id":"t1","text":"Name the largest planet."}' '{"id":"t1","text":"Another question"}' >dup.jsonl
bad_case duplicate-id "dup.jsonl:2: id: duplicate id 't1' (first seen at dup.jsonl:1)" --dev dev.jsonl --test dup.jsonl

# across files: the id is taken in dev already
printf '%s\n' '{"id":"d2","text":"A fresh question"}' >dupx.jsonl
bad_case duplicate-id-across-files "dupx.jsonl:1: id: duplicate id 'd2' (first seen at dev.jsonl:2)" \
    --dev dev.jsonl --test dupx.jsonl

printf '%s\n' '{"id":"t1","text":"ok"}' '{"id":"","text":"no id"}' >empty.jsonl
bad_case empty-id "empty.jsonl:2: id: empty; expected a non-empty string" --dev dev.jsonl --test empty.jsonl

printf '%s\n' '{"id":"t1","text":"ok","available_on":"2026-06-01"}' \
    '{"id":"t2","text":"ok too","available_on":"2026-7-1"}' >date1.jsonl
bad_case short-date "date1.jsonl:2: available_on: expected a date YYYY-MM-DD that exists on the calendar, got '2026-7-1'" \
    --dev dev.jsonl --test date1.jsonl

printf '%s\n' '{"id":"t1","text":"ok","available_on":"2026-02-30"}' >date2.jsonl
bad_case impossible-date "date2.jsonl:1: available_on: expected a date YYYY-MM-DD that exists on the calendar, got '2026-02-30'" \
    --dev dev.jsonl --test date2.jsonl

printf '%s\n' '{"id":"t1","text":"ok"}' '{"id":"t2","question":"text under another name"}' >notext.jsonl
bad_case missing-text "notext.jsonl:2: text: missing; expected a string" --dev dev.jsonl --test notext.jsonl

printf '{"id":"t1","text":"caf\xe9 in Latin-1"}\n' >latin1.jsonl
bad_case invalid-utf8 "latin1.jsonl:1: text: invalid UTF-8 (byte 0xe9 at offset 3 of the value; Latin-1 or Windows-1252 text? convert the file first: iconv -f WINDOWS-1252 -t UTF-8)" \
    --dev dev.jsonl --test latin1.jsonl

printf '%s\n' '{"id":"a","split":"dev","text":"x"}' '{"id":"b","split":"test","text":"y"}' \
    '{"id":"c","split":"tset","text":"z"}' >parts.jsonl
bad_case unknown-partition "parts.jsonl:3: split: unknown partition 'tset'" parts.jsonl

check "split reports bad dates the same way and leaves its --out alone"
printf '%s\n' '{"id":"a","available_on":"2026-01-01"}' '{"id":"b","available_on":"2026-02-30"}' >splitbad.jsonl
la split --cutoff 2026-07-01 splitbad.jsonl --out new-split
expect_rc 2
expect_has err.txt "splitbad.jsonl:2: available_on: expected a date YYYY-MM-DD that exists on the calendar, got '2026-02-30'"
[ ! -e new-split ] || fail "split created new-split"

check "many bad rows: the first 20 problems, then a count"
python3 -c '
for i in range(25): print("{\"id\":\"x%d\"}" % i)' >many.jsonl
la audit --dev dev.jsonl --test many.jsonl --out prev
expect_rc 2
[ "$(grep -c ': text: missing; expected a string' err.txt)" -eq 20 ] || fail "expected 20 problem lines"
expect_has err.txt "many.jsonl:20: text: missing"
expect_lacks err.txt "many.jsonl:21: text: missing"
expect_has err.txt "and 5 more problems"
tree_digest prev >after.digest
cmp -s prev.digest after.digest || fail "the previous report changed"

pass
