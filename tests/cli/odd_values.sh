#!/usr/bin/env bash
# Odd values give right answers or a clear refusal, never a wrong one: integer families beyond 64
# bits stay apart (their literal text is the key), ids and texts with U+0000 are refused rather than
# cut, scores follow one strict rule for numbers and strings, options out of range are refused.
source "$(dirname "$0")/lib.bash"

check "integer families beyond 2^64 are different families (no false family leak)"
printf '%s\n' '{"id":"d1","text":"first question here","family":18446744073709551616}' >fd.jsonl
printf '%s\n' '{"id":"t1","text":"another one entirely","family":18446744073709551617}' >ft.jsonl
la audit --dev fd.jsonl --test ft.jsonl --out fam
expect_rc 0
[ "$(wc -l <fam/pairs.jsonl)" -eq 0 ] || fail "a family pair between two different families"
check "the same big integer on both sides is one family"
printf '%s\n' '{"id":"t1","text":"another one entirely","family":18446744073709551616}' >ft2.jsonl
la audit --dev fd.jsonl --test ft2.jsonl --out fam2
expect_rc 1
expect_has fam2/pairs.jsonl '"family"'
check "-0 and 0, 1.0 and 1 are different family texts, as written"
printf '%s\n' '{"id":"t1","text":"another one entirely","family":-0}' >fz.jsonl
printf '%s\n' '{"id":"d1","text":"first question here","family":0}' >fzd.jsonl
la audit --dev fzd.jsonl --test fz.jsonl --out famz
expect_rc 0

check "an id with U+0000 is refused with FILE:LINE: id, not cut into a false duplicate"
printf '%s\n' '{"id":"a","text":"one"}' '{"id":"a\u0000b","text":"two"}' >nul.jsonl
printf '%s\n' '{"id":"t1","text":"three"}' >t.jsonl
la audit --dev nul.jsonl --test t.jsonl --out nul
expect_rc 2
expect_has err.txt "nul.jsonl:2: id: contains U+0000 (NUL) at offset 1 of the value"
expect_lacks err.txt "duplicate id"
[ ! -e nul ] || fail "nul/ was written"
printf '%s\n' '{"id":"t2","text":"x\u0000y"}' >nultext.jsonl
la audit --dev t.jsonl --test nultext.jsonl --out nul
expect_rc 2
expect_has err.txt "nultext.jsonl:1: text: contains U+0000"
printf '%s\n' '{"id":"t2","text":"x","family":"f\u0000"}' >nulfam.jsonl
la audit --dev t.jsonl --test nulfam.jsonl --out nul
expect_rc 2
expect_has err.txt "nulfam.jsonl:1: family: contains U+0000"

check "scores: one rule for numbers and strings"
score_case() { # VALUE-AS-JSON EXPECTED-RC [MESSAGE]
    printf '{"id":"s1","text":"q","score":%s}\n' "$1" >score.jsonl
    la audit --dev t.jsonl --test score.jsonl --out "score-$2" --score-field score
    expect_rc "$2" "score $1"
    if [ -n "${3:-}" ]; then expect_has err.txt "score.jsonl:1: score: $3"; fi
    rm -rf "score-$2"
}
score_case '"-1"' 2 "expected a number in [0, 1], got '-1'"
score_case '-1' 2 "expected a number in [0, 1], got a number"
score_case '"0x1"' 2 "expected a number in [0, 1], got '0x1'"
score_case '" 1"' 2 "expected a number in [0, 1], got ' 1'"
score_case '"1."' 2 "expected a number in [0, 1], got '1.'"
score_case '"inf"' 2 "expected a number in [0, 1], got 'inf'"
score_case '"nan"' 2 "expected a number in [0, 1], got 'nan'"
score_case '"1e0"' 0
# a CSV cell is a string: -1 is a bad score, never "no score"
printf 'id,text,score\ns1,q,-1\ns2,r,-1.0\ns3,w,\n' >score.csv
la audit --dev t.jsonl --test score.csv --out score-csv --score-field score
expect_rc 2 "CSV score -1"
expect_has err.txt "score.csv:2: score: expected a number in [0, 1], got '-1'"
expect_has err.txt "score.csv:3: score: expected a number in [0, 1], got '-1.0'"
grep -q "score.csv:4" err.txt && fail "an empty CSV score cell is no score, not an error"
score_case '"0.25"' 0
score_case '0.25' 0
score_case 'true' 0
score_case '""' 0
printf '%s\n' '{"id":"s1","text":"q","score":""}' >score.jsonl
la audit --dev t.jsonl --test score.jsonl --out sc --score-field score
expect_rc 0
[ "$(json_get sc/report.json 'j["statistics"]["heldout"]["accuracy_source"]')" != scores ] || fail "an empty score counted"

check "options out of range or empty are refused"
la audit --dev t.jsonl --test score.jsonl --containment-threshold 1.5 --out o
expect_rc 2
expect_has err.txt "--containment-threshold 1.5: expected a share from 0.01 to 1, or off"
la audit --dev t.jsonl --test score.jsonl --near-threshold 0x1 --out o
expect_rc 2
expect_has err.txt "--near-threshold 0x1: expected a number"
la audit --dev t.jsonl --test score.jsonl --containment-threshold off --out o
expect_rc 0
rm -rf o
for opt in id text split family date label score; do
    la audit --dev t.jsonl --test score.jsonl "--$opt-field" '' --out o
    expect_rc 2 "--$opt-field ''"
    expect_has err.txt "--$opt-field '': expected a field name"
    [ ! -e o ] || fail "o/ was written"
done

pass
