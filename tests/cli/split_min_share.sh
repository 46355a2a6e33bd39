#!/usr/bin/env bash
# split says when a side comes out (nearly) empty: a warning on stderr when dev or test holds under
# 5% of the rows placed, and with --min-share X exit 1 (outputs still written) when under X.
source "$(dirname "$0")/lib.bash"

# every family spans the cutoff or falls after it: dev gets nothing
for i in 1 2 3 4 5 6 7 8; do
    printf '{"id":"a%s","family":"f%s","available_on":"2025-06-01","text":"old revision %s"}\n' $i $i $i
    printf '{"id":"b%s","family":"f%s","available_on":"2026-02-01","text":"new revision %s"}\n' $i $i $i
done >spanning.jsonl
printf '{"id":"c%s","available_on":"2026-03-01","text":"later row %s"}\n' 1 1 2 2 >>spanning.jsonl

check "an empty dev side is warned about, exit 0 without --min-share"
la split --cutoff 2026-01-01 spanning.jsonl --out s1
expect_rc 0
expect_has err.txt "warning: dev got 0 of the 18 rows placed (0.0%), under 5.0%"

check "--min-share 0.2 fails it with exit 1 and still writes the outputs"
la split --cutoff 2026-01-01 spanning.jsonl --min-share 0.2 --out s2
expect_rc 1
expect_has err.txt "error: dev got 0 of the 18 rows placed (0.0%), under --min-share 20.0%"
[ -s s2/quarantine.jsonl ] && [ -f s2/report.json ] || fail "the outputs should be written"

check "a balanced split passes --min-share quietly"
for i in 1 2 3 4; do
    printf '{"id":"o%s","available_on":"2025-01-0%s","text":"early %s"}\n' $i $i $i
    printf '{"id":"n%s","available_on":"2026-05-0%s","text":"late %s"}\n' $i $i $i
done >balanced.jsonl
la split --cutoff 2026-01-01 balanced.jsonl --min-share 0.3 --out s3
expect_rc 0
expect_lacks err.txt "warning"

check "--min-share out of range is a usage error"
la split --cutoff 2026-01-01 balanced.jsonl --min-share 0.9 --out s4
expect_rc 2
expect_has err.txt "--min-share 0.9: expected a number from 0 to 0.5"
pass
