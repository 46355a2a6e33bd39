#!/usr/bin/env bash
# Allocation failure, SQLite-style: a small audit (exact, near, family, time and the lexical
# semantic tier), a chronological split and a three-set split are each run once per allocation
# the program makes, with that allocation failing
# (leakaudit_failalloc, LA_FAIL_ALLOC=N). Every run either ends in exit 3 with a message and leaves
# the previous report in --out as it was (no partial output, nothing beside it), or recovers and
# writes the same reports as a run without failures (all but the timings and fingerprints of
# report.json and report.html). No crash, no other exit code. With the built-in model installed,
# the audit with the model is walked too: every allocation in a plain build, every 8th under the
# sanitizers (there each run hashes the 90 MB weights file in instrumented -O0 code: 1.2 s a run).
source "$(dirname "$0")/lib.bash"
: "${LEAKAUDIT_FAILALLOC:?LEAKAUDIT_FAILALLOC must name the leakaudit_failalloc binary}"

printf '%s\n' '{"id":"d1","text":"alpha beta gamma delta","family":"f1","available_on":"2026-03-01"}' \
    '{"id":"d2","text":"what is two plus two"}' '{"id":"d3","text":"epsilon zeta eta theta iota"}' >dev.jsonl
printf '%s\n' '{"id":"t1","text":"What is two plus two"}' \
    '{"id":"t2","text":"alpha beta gamma delta epsilon","family":"f1"}' '{"id":"t3","text":"bad","available_on":"2026-02-30"}' >test.jsonl
# walk NAME EXPECTED-RC ARGS...: the reference run, then one run per allocation with it failing.
walk() {
    local name=$1 want=$2
    shift 2
    check "$name: a run without failures, the reference, and the number of allocations"
    rm -rf "ref-$name" "prev-$name"
    set +e
    LA_FAIL_ALLOC=0 "$LEAKAUDIT_FAILALLOC" "$@" --out "ref-$name" >out.txt 2>err.txt
    local ref_rc=$?
    set -e
    no_sanitizer_report err.txt "$name: the reference run"
    [ "$ref_rc" -eq "$want" ] || fail "$name: the reference run should exit $want, got $ref_rc"
    local total
    total=$(sed -n 's/^allocations: //p' err.txt)
    [ -n "$total" ] && [ "$total" -gt 50 ] || fail "$name: allocations not counted: '$total'"
    echo "$total allocations"
    cp -r "ref-$name" "prev-$name"
    tree_digest "prev-$name" >prev.digest

    local step=${WALK_STEP:-1} what="each of the $total allocations"
    [ "$step" -eq 1 ] || what="every ${step}th of the $total allocations"
    check "$name: $what failing in turn: exit 3 and --out untouched, or the same reports"
    local failed=0 recovered=0 i f
    for ((i = 1; i <= total; i += step)); do
        set +e
        LA_FAIL_ALLOC=$i "$LEAKAUDIT_FAILALLOC" "$@" --out "prev-$name" >out.txt 2>err.txt
        rc=$?
        set -e
        no_sanitizer_report err.txt "$name: allocation $i failing"
        if [ "$rc" -eq 3 ]; then
            [ -s err.txt ] || fail "$name: allocation $i: exit 3 without a message"
            tree_digest "prev-$name" >after.digest
            cmp -s prev.digest after.digest || fail "$name: allocation $i: exit 3 but --out changed"
            failed=$((failed + 1))
        elif [ "$rc" -eq "$ref_rc" ]; then
            for f in "ref-$name"/*.jsonl "ref-$name"/*.md "ref-$name"/.leakaudit-manifest; do
                expect_same "$f" "prev-$name/${f#ref-"$name"/}"
            done
            [ ! -e "ref-$name/report.junit.xml" ] || expect_same "ref-$name/report.junit.xml" "prev-$name/report.junit.xml"
            tree_digest "prev-$name" >prev.digest
            recovered=$((recovered + 1))
        else
            fail "$name: allocation $i: exit $rc (expected 3, or $ref_rc when the run recovers); stderr: $(head -c 300 err.txt)"
        fi
        no_leftovers "prev-$name"
    done
    echo "$failed runs ended in exit 3, $recovered recovered"
    [ "$failed" -gt 0 ] || fail "$name: no allocation failure was ever reported"
}

walk audit 1 audit --dev dev.jsonl --test test.jsonl --cutoff 2026-01-01 --threads 1 --on-invalid reject --quiet \
    --embed lexical
if "$LEAKAUDIT" models 2>/dev/null | grep -q "all-MiniLM-L6-v2 (default)"; then
    step=1
    [ -z "${SANITIZE:-}" ] || step=8
    WALK_STEP=$step walk audit-model 1 audit --dev dev.jsonl --test test.jsonl --cutoff 2026-01-01 --threads 1 \
        --on-invalid reject --quiet --embed model
else
    echo "the built-in model is not installed (scripts/install-deps.sh): the audit with it is not walked"
fi

printf '%s\n' '{"id":"a1","text":"alpha beta gamma","available_on":"2025-01-01","family":"f1","label":"x"}' \
    '{"id":"a2","text":"alpha beta gamma","available_on":"2026-03-01","label":"y"}' \
    '{"id":"a3","text":"delta epsilon","available_on":"2026-05-01","family":"f1","label":"x"}' \
    '{"id":"a4","text":"zeta eta theta","available_on":"2024-05-01","label":"y"}' \
    '{"id":"a5","text":"iota kappa","available_on":"2026-06-01","label":"x"}' \
    '{"id":"a6","text":"lambda mu nu","available_on":"2023-06-01","label":"y"}' >rows.jsonl
walk split 0 split --cutoff 2026-01-01 rows.jsonl --threads 1 --quiet
walk three-set 0 split --three-set --seed 3 --demos-per-class 1 rows.jsonl --threads 1 --quiet

pass
