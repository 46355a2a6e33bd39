#!/usr/bin/env bash
# The command line itself: --version and --help exit 0 and say what they should, usage errors exit
# 2 with a message and write nothing, and --out is only ever replaced when it holds a previous
# report and nothing else (a foreign non-empty directory or a file is refused and left untouched;
# tests/cli/out_dir.sh has the rest).
source "$(dirname "$0")/lib.bash"

printf '%s\n' '{"id":"d1","text":"alpha"}' >dev.jsonl
printf '%s\n' '{"id":"t1","text":"beta"}' >test.jsonl

check "--version prints the version and exits 0"
la --version
expect_rc 0
grep -qE '^leakaudit [0-9]+\.[0-9]+\.[0-9]+' out.txt || fail "--version should print 'leakaudit X.Y.Z'"

check "--help, audit --help and split --help exit 0 and describe usage"
la --help
expect_rc 0
expect_has out.txt "Usage: leakaudit <command>"
check "the top-level help names every evidence kind audit finds"
for kind in "family ids" "time cutoff" "exact copies" "near copies" "semantic copies"; do
    grep -A3 '^  audit ' out.txt | grep -q "$kind" || fail "leakaudit --help: audit's line lacks '$kind'"
done
expect_has out.txt "exit 1 when"
la audit --help
expect_rc 0
expect_has out.txt "Usage: leakaudit audit"
expect_has out.txt "--on-invalid"
expect_has out.txt "Exit codes"
la split --help
expect_rc 0
expect_has out.txt "Usage: leakaudit split"
expect_has out.txt "--cutoff"
expect_has out.txt "1 dev or test got less than --min-share"

check "unknown option: exit 2 naming it"
la audit --dev dev.jsonl --test test.jsonl --no-such-option --out o1
expect_rc 2
expect_has err.txt "--no-such-option"
[ ! -e o1 ] || fail "o1 was created"
la split --cutoff 2026-07-01 dev.jsonl --bogus --out o2
expect_rc 2
expect_has err.txt "--bogus"
[ ! -e o2 ] || fail "o2 was created"

check "unknown command and no command: exit 2"
la frobnicate
expect_rc 2
expect_has err.txt "frobnicate"
la
expect_rc 2

check "option errors: exit 2 with the option named"
la audit --dev dev.jsonl --test test.jsonl --cutoff 2026-7-1 --out o3
expect_rc 2
expect_has err.txt "--cutoff 2026-7-1"
la audit --dev dev.jsonl --test test.jsonl --normalize nfc --out o3
expect_rc 2
expect_has err.txt "--normalize"
la audit --dev dev.jsonl --test test.jsonl --on-invalid skip --out o3
expect_rc 2
expect_has err.txt "--on-invalid"
la audit --out o3
expect_rc 2
expect_has err.txt "no input files"
la audit --dev dev.jsonl --test test.jsonl --out
expect_rc 2
[ ! -e o3 ] || fail "o3 was created"

check "--parts given twice: the names of both lists are known (the first list stays valid)"
printf '%s\n' '{"id":"a1","text":"alpha one","split":"alpha"}' '{"id":"b1","text":"beta two","split":"beta"}' \
    '{"id":"t1","text":"gamma three","split":"test"}' >splits.jsonl
la audit splits.jsonl --parts alpha,test --parts beta --out parts2
expect_rc 0
[ "$(json_get parts2/report.json 'sorted(j["counts"]["partitions"])')" = "['alpha', 'beta', 'test']" ] ||
    fail "partitions of both --parts lists"

check "partition names that would overwrite a report file are refused (any case), nothing written"
for name in report pairs assignments clusters quarantine rejects rejected nearest within_pairs manifest Clusters NEAREST; do
    la audit --part "$name=dev.jsonl" --test test.jsonl --out "reserved-$name"
    expect_rc 2 "--part $name=dev.jsonl"
    expect_has err.txt "--part $name=dev.jsonl: the partition name '$name' is reserved"
    [ ! -e "reserved-$name" ] || fail "reserved-$name was created"
done
la audit splits.jsonl --parts alpha,clusters --out reserved-parts
expect_rc 2
expect_has err.txt "--parts clusters: the partition name 'clusters' is reserved"
la audit --dev dev.jsonl --part within_pairs=test.jsonl --heldout within_pairs --out reserved-heldout
expect_rc 2
expect_has err.txt "is reserved"
check "every name a report file uses is reserved: an audit with all outputs writes no file twice"
la audit --part seen=dev.jsonl --test test.jsonl --within --embed lexical --out allfiles
expect_rc 0
[ -f allfiles/clusters.jsonl ] && [ -f allfiles/nearest.jsonl ] && [ -f allfiles/seen.jsonl ] || fail "outputs missing"

check "split: conflicting rules with semantic options given: exit 2, nothing written (and nothing leaked)"
la split --cutoff 2026-07-01 --three-set --embeddings input=emb.npy --semantic-threshold 0.9 dev.jsonl --out o4
expect_rc 2
expect_has err.txt "choose one rule: --cutoff (chronological) or --three-set"
[ ! -e o4 ] || fail "o4 was created"

check "--out: a non-empty directory without a report is refused (exit 2) and left untouched"
mkdir -p foreign/sub
echo "my notes" >foreign/notes.txt
echo "keep" >foreign/sub/file
tree_digest foreign >foreign.digest
la audit --dev dev.jsonl --test test.jsonl --out foreign
expect_rc 2
expect_has err.txt "refusing to replace"
tree_digest foreign >after.digest
cmp -s foreign.digest after.digest || fail "foreign/ changed"
no_leftovers foreign

check "--out: a regular file is refused (exit 2) and left untouched"
echo "a file" >afile
la audit --dev dev.jsonl --test test.jsonl --out afile
expect_rc 2
[ "$(cat afile)" = "a file" ] || fail "afile changed"
no_leftovers afile

check "--out: an empty directory is used; a previous report is replaced whole"
mkdir empty
la audit --part seen=dev.jsonl --test test.jsonl --out empty
expect_rc 0
[ -f empty/report.json ] || fail "no report in empty/"
[ -f empty/seen.jsonl ] || fail "no seen.jsonl in empty/"
printf '%s\n' '{"id":"t1","text":"ALPHA"}' >test2.jsonl
la audit --dev dev.jsonl --test test2.jsonl --out empty/
expect_rc 1
[ ! -e empty/seen.jsonl ] || fail "a file of the previous report survived"
[ "$(wc -l <empty/pairs.jsonl)" -eq 1 ] || fail "the new report is not in place"
no_leftovers empty

check "the default --out is leakaudit-report"
la audit --dev dev.jsonl --test test.jsonl
expect_rc 0
[ -f leakaudit-report/report.json ] || fail "no leakaudit-report/report.json"

pass
