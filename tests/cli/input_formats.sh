#!/usr/bin/env bash
# The same held-out rows read as JSONL, from standard input ('-'), gzip, zstd, CSV and TSV give the
# same findings: identical pairs.jsonl and assignments.jsonl, with the format and compression
# recorded in report.json.
source "$(dirname "$0")/lib.bash"

cat >dev.jsonl <<'J'
{"id":"d1","text":"What is 12 times 12?"}
{"id":"d2","text":"Spell \"necessary\", please."}
{"id":"d3","text":"An unrelated dev question"}
J
cat >test.jsonl <<'J'
{"id":"t1","text":"what is 12 TIMES 12?"}
{"id":"t2","text":"Spell \"necessary\",   please."}
{"id":"t3","text":"A clean held-out question"}
J

check "plain JSONL: exit 1 with two exact pairs"
la audit --dev dev.jsonl --test test.jsonl --out plain
expect_rc 1
[ "$(grep -c '"exact"' plain/pairs.jsonl)" -eq 2 ] || fail "expected 2 exact pairs"

# same_findings DIR FORMAT COMPRESSION: DIR agrees with the plain run and records how it read test.
same_findings() {
    expect_rc 1 "$1"
    expect_same plain/pairs.jsonl "$1/pairs.jsonl"
    expect_same plain/assignments.jsonl "$1/assignments.jsonl"
    [ "$(json_get "$1/report.json" '[(i["format"], i["compression"]) for i in j["inputs"] if i["path"] != "dev.jsonl"][0]')" = "('$2', '$3')" ] ||
        fail "$1: report.json should record format $2 and compression $3"
}

check "standard input: --test -"
la audit --dev dev.jsonl --test - --out stdin <test.jsonl
same_findings stdin jsonl none
[ "$(json_get stdin/report.json '[i["path"] for i in j["inputs"]]')" = "['dev.jsonl', '-']" ] || fail "stdin path should be '-'"

check "gzip: test.jsonl.gz"
python3 -c 'import gzip,sys; gzip.open(sys.argv[2], "wb").write(open(sys.argv[1], "rb").read())' test.jsonl test.jsonl.gz
la audit --dev dev.jsonl --test test.jsonl.gz --out gz
same_findings gz jsonl gzip

check "gzip on standard input"
la audit --dev dev.jsonl --test - --out gzstdin <test.jsonl.gz
same_findings gzstdin jsonl gzip

if command -v zstd >/dev/null; then
    check "zstd: test.jsonl.zst"
    zstd -q -f test.jsonl -o test.jsonl.zst
    la audit --dev dev.jsonl --test test.jsonl.zst --out zst
    same_findings zst jsonl zstd
else
    echo "note: no zstd command; the zstd reader is covered by the unit test test_load"
fi

check "CSV with a header row, quoting and a record spanning two lines"
cat >test.csv <<'C'
id,text
t1,what is 12 TIMES 12?
t2,"Spell ""necessary"",   please."
t3,"A clean
held-out question"
C
la audit --dev dev.jsonl --test test.csv --out csv
expect_rc 1
expect_same plain/pairs.jsonl csv/pairs.jsonl
[ "$(json_get csv/report.json '[i["format"] for i in j["inputs"]]')" = "['jsonl', 'csv']" ] || fail "format should be csv"

check "CSV: a bad row is reported on its physical line"
printf 'id,text\nc1,"two\nlines"\n\nc2,"x",extra\n' >bad.csv
la audit --dev dev.jsonl --test bad.csv --out csvbad
expect_rc 2
expect_has err.txt "bad.csv:5: record: expected 2 fields as in the header row, got 3"

check "TSV with a header row"
printf 'id\ttext\nt1\twhat is 12 TIMES 12?\nt2\tSpell "necessary",   please.\nt3\tA clean held-out question\n' >test.tsv
la audit --dev dev.jsonl --test test.tsv --out tsv
same_findings tsv tsv none

check "CSV on standard input is recognized by its content"
la audit --dev dev.jsonl --test - --out csvstdin <test.csv
expect_rc 1
expect_same plain/pairs.jsonl csvstdin/pairs.jsonl

check "standard input can be read only once"
la audit --dev - --test - --out twice <test.jsonl
expect_rc 2
[ ! -e twice ] || fail "twice was created"

check "a missing input file: exit 2 naming the file"
la audit --dev dev.jsonl --test no-such-file.jsonl --out missing
expect_rc 2
expect_has err.txt "no-such-file.jsonl"
[ ! -e missing ] || fail "missing was created"

pass
