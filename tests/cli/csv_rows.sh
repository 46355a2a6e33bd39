#!/usr/bin/env bash
# A bad CSV row is a reject like any other: a ragged row or a malformed quote keeps its text in
# rejects.jsonl and, under --on-invalid reject, reading goes on with the next row; under fail it is
# listed with FILE:LINE and nothing is written. A header that names a column twice is refused.
source "$(dirname "$0")/lib.bash"

printf '%s\n' '{"id":"t1","text":"held out question"}' >test.jsonl
printf 'id,text\nd1,first row\nd2,ragged,extra cell\nd3,"bad "quote" here"\nd4,"multi\nline ok"\nd5,last row\n' >dev.csv

check "--on-invalid fail: each bad row named with FILE:LINE, nothing written"
la audit --dev dev.csv --test test.jsonl --out fail
expect_rc 2
expect_has err.txt "dev.csv:3: record: expected 2 fields as in the header row, got 3"
expect_has err.txt "dev.csv:4: record: malformed CSV"
expect_has err.txt "2 invalid rows in the input; nothing written"
[ ! -e fail ] || fail "fail/ was written"

check "--on-invalid reject: the rows after a malformed quote are read; rejects keep each row's text"
la audit --dev dev.csv --test test.jsonl --on-invalid reject --out rej
expect_rc 0
[ "$(json_get rej/report.json 'j["counts"]["partitions"]["dev"]["kept"]')" = 3 ] || fail "d1, d4 and d5 placed"
python3 - rej/rejects.jsonl <<'PY' || fail "rejects.jsonl lost a row's text"
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
by_line = {r["line"]: r for r in rows}
assert set(by_line) == {3, 4}, sorted(by_line)
assert by_line[3]["record"] == "d2,ragged,extra cell", by_line[3]
assert by_line[4]["record"] == 'd3,"bad "quote" here"', by_line[4]
PY
expect_has rej/dev.jsonl '"id":"d5"'
expect_has rej/dev.jsonl '"text":"multi\nline ok"'

check "a TSV ragged row keeps its text too"
printf 'id\ttext\nd1\tone\nd2\ttwo\tthree\n' >dev.tsv
la audit --dev dev.tsv --test test.jsonl --on-invalid reject --out tsv
expect_rc 0
expect_has tsv/rejects.jsonl '"record":"d2\ttwo\tthree"'

check "a header naming a column twice is refused (it would keep only one of them)"
printf 'id,text,text\nd1,a,b\n' >duph.csv
la audit --dev duph.csv --test test.jsonl --on-invalid reject --out duph
expect_rc 2
expect_has err.txt "duph.csv:1: header: column 'text' appears twice (columns 2 and 3)"
[ ! -e duph ] || fail "duph/ was written"
printf 'id\ttext\tid\nd1\ta\tb\n' >duph.tsv
la audit --dev duph.tsv --test test.jsonl --out duph
expect_rc 2
expect_has err.txt "duph.tsv:1: header: column 'id' appears twice (columns 1 and 3)"

check "a file separated by semicolons, read as CSV, is one column: the error asks about the separator"
printf 'id;text\nd1;Ann has 3 apples\n' >semi.csv
la audit --dev semi.csv --test test.jsonl --out semi
expect_rc 2
expect_has err.txt "semi.csv:2: text: missing; expected a string; the record has keys id;text (one column: are its fields separated by ';'? CSV is read with commas, TSV with tabs)"
printf 'id,text;x\nd1,Ann has 3 apples\n' >comma.csv
la audit --dev comma.csv --test test.jsonl --out semi
expect_rc 2
expect_lacks err.txt "one column"

pass
