#!/usr/bin/env bash
# Allocation failure, SQLite-style: a small audit (exact, near, family, time and the lexical
# semantic tier) is run once per allocation the program makes, with that allocation failing
# (leakaudit_failalloc, LA_FAIL_ALLOC=N). Every run either ends in exit 3 with a message and leaves
# the previous report in --out as it was (no partial output, nothing beside it), or recovers and
# writes the same reports as a run without failures (all but the timings and fingerprints of
# report.json and report.html). No crash, no other exit code.
source "$(dirname "$0")/lib.bash"
: "${LEAKAUDIT_FAILALLOC:?LEAKAUDIT_FAILALLOC must name the leakaudit_failalloc binary}"

printf '%s\n' '{"id":"d1","text":"alpha beta gamma delta","family":"f1","available_on":"2026-03-01"}' \
    '{"id":"d2","text":"what is two plus two"}' '{"id":"d3","text":"epsilon zeta eta theta iota"}' >dev.jsonl
printf '%s\n' '{"id":"t1","text":"What is two plus two"}' \
    '{"id":"t2","text":"alpha beta gamma delta epsilon","family":"f1"}' '{"id":"t3","text":"bad","available_on":"2026-02-30"}' >test.jsonl
args=(audit --dev dev.jsonl --test test.jsonl --cutoff 2026-01-01 --threads 1 --on-invalid reject --quiet)

check "a run without failures: the reference, and the number of allocations"
set +e
LA_FAIL_ALLOC=0 "$LEAKAUDIT_FAILALLOC" "${args[@]}" --out ref >out.txt 2>err.txt
ref_rc=$?
set -e
no_sanitizer_report err.txt "the reference run"
[ "$ref_rc" -eq 1 ] || fail "the reference run should find leaks (exit 1), got $ref_rc"
total=$(sed -n 's/^allocations: //p' err.txt)
[ -n "$total" ] && [ "$total" -gt 50 ] || fail "allocations not counted: '$total'"
echo "$total allocations"
cp -r ref prev
tree_digest prev >prev.digest

check "each of the $total allocations failing in turn: exit 3 and --out untouched, or the same report"
failed=0 recovered=0
for ((i = 1; i <= total; i++)); do
    set +e
    LA_FAIL_ALLOC=$i "$LEAKAUDIT_FAILALLOC" "${args[@]}" --out prev >out.txt 2>err.txt
    rc=$?
    set -e
    no_sanitizer_report err.txt "allocation $i failing"
    if [ "$rc" -eq 3 ]; then
        [ -s err.txt ] || fail "allocation $i: exit 3 without a message"
        tree_digest prev >after.digest
        cmp -s prev.digest after.digest || fail "allocation $i: exit 3 but --out changed"
        failed=$((failed + 1))
    elif [ "$rc" -eq "$ref_rc" ]; then
        for f in ref/*.jsonl ref/report.md ref/report.junit.xml ref/.leakaudit-manifest; do
            expect_same "$f" "prev/${f#ref/}"
        done
        tree_digest prev >prev.digest
        recovered=$((recovered + 1))
    else
        fail "allocation $i: exit $rc (expected 3, or $ref_rc when the run recovers); stderr: $(head -c 300 err.txt)"
    fi
    no_leftovers prev
done
echo "$failed runs ended in exit 3, $recovered recovered"
[ "$failed" -gt 0 ] || fail "no allocation failure was ever reported"

pass
