#!/usr/bin/env bash
# Exit codes as a CI step sees them: 0 for clean input, 1 for leaks, 0 again when --fail-on leaves
# out the kinds found (the report still lists them), 2 for a bad --fail-on.
source "$(dirname "$0")/lib.bash"

cat >dev.jsonl <<'J'
{"id":"d1","text":"How many legs does a spider have?","family":"spiders"}
{"id":"d2","text":"What is the boiling point of water?"}
J
cat >test.jsonl <<'J'
{"id":"t1","text":"Name the largest planet."}
{"id":"t2","text":"Who wrote Hamlet?"}
J

check "clean input: exit 0, no pairs, nothing quarantined"
la audit --dev dev.jsonl --test test.jsonl --out clean
expect_rc 0
expect_has out.txt "no leaks"
[ -f clean/pairs.jsonl ] && [ ! -s clean/pairs.jsonl ] || fail "pairs.jsonl should exist and be empty"
[ ! -s clean/quarantine.jsonl ] || fail "quarantine.jsonl should be empty"
expect_same dev.jsonl clean/dev.jsonl
expect_same test.jsonl clean/test.jsonl
[ "$(json_get clean/report.json 'j["leaks"]')" = False ] || fail "report.json leaks should be false"
[ "$(json_get clean/report.json 'j["exit_code"]')" = 0 ] || fail "report.json exit_code should be 0"

# plant an exact copy and a family link
printf '%s\n' '{"id":"t3","text":"what is the BOILING point of water?"}' \
    '{"id":"t4","text":"Spiders: eyes?","family":"spiders"}' >>test.jsonl

# the exact and family links (later tiers may add kinds to a pair; these must be there)
links() {
    python3 - "$1" <<'PY'
import json, sys
pairs = [json.loads(l) for l in open(sys.argv[1])]
print(sorted((k, p["id_a"], p["id_b"]) for p in pairs for k in p["kinds"] if k in ("exact", "family", "time")))
PY
}
want_links="[('exact', 'd2', 't3'), ('family', 'd1', 't4')]"

check "leaks: exit 1, an exact and a family link"
la audit --dev dev.jsonl --test test.jsonl --out leaky
expect_rc 1
[ "$(links leaky/pairs.jsonl)" = "$want_links" ] || fail "leaky: links are $(links leaky/pairs.jsonl)"

check "--fail-on none: exit 0 with the leaks still reported"
la audit --dev dev.jsonl --test test.jsonl --fail-on none --out none
expect_rc 0
expect_has out.txt "exit 0"
[ "$(links none/pairs.jsonl)" = "$want_links" ] || fail "none: links are $(links none/pairs.jsonl)"
[ "$(json_get none/report.json 'j["findings"]["pairs_by_kind"]["exact"]')" = 1 ] || fail "report.json should still count the exact link"
[ "$(json_get none/report.json 'j["exit_code"]')" = 0 ] || fail "report.json exit_code should be 0"

check "--fail-on time (not found): exit 0; --fail-on exact and --fail-on family: exit 1"
la audit --dev dev.jsonl --test test.jsonl --fail-on time --out k1
expect_rc 0
la audit --dev dev.jsonl --test test.jsonl --fail-on exact --out k2
expect_rc 1
la audit --dev dev.jsonl --test test.jsonl --fail-on family,near --out k3
expect_rc 1

check "--fail-on with an unknown kind is a usage error (exit 2)"
la audit --dev dev.jsonl --test test.jsonl --fail-on exactly --out k4
expect_rc 2
expect_has err.txt "--fail-on"
[ ! -e k4 ] || fail "k4 was created"
# the message names the option once and the value as given (it was once formatted into itself)
expect_has err.txt "leakaudit audit: --fail-on 'exactly': unknown kind"
grep -q -- "--fail-on: --fail-on" err.txt && fail "the --fail-on message repeats itself"
la audit --dev dev.jsonl --test test.jsonl --fail-on exact:bogus --out k4
expect_rc 2
expect_has err.txt "leakaudit audit: --fail-on 'exact:bogus': unknown grade 'bogus' (expected copy, near or related)"

check "--heldout naming no partition is a usage error (exit 2)"
la audit --dev dev.jsonl --test test.jsonl --heldout eval --out k5
expect_rc 2
[ ! -e k5 ] || fail "k5 was created"

check "a seen row dated after --cutoff is a time leak: exit 1, listed under findings.time"
printf '%s\n' '{"id":"x1","text":"late seen row","available_on":"2026-08-01"}' >late.jsonl
printf '%s\n' '{"id":"y1","text":"held-out row","available_on":"2026-09-01"}' >held.jsonl
la audit --dev late.jsonl --test held.jsonl --cutoff 2026-07-01 --out time
expect_rc 1
expect_has out.txt "1 rows on the wrong side of the cutoff"
[ "$(json_get time/report.json '[t["id"] for t in j["findings"]["time"]]')" = "['x1']" ] || fail "findings.time should list x1"
expect_has time/assignments.jsonl '"id":"x1","split_in":"dev","split_out":"quarantine"'

check "cutoff between the two dates: exit 0; cutoff after the held-out date: the held-out row leaks"
la audit --dev late.jsonl --test held.jsonl --cutoff 2026-08-02 --out time2
expect_rc 0
la audit --dev late.jsonl --test held.jsonl --cutoff 2026-09-02 --out time3
expect_rc 1
[ "$(json_get time3/report.json '[t["id"] for t in j["findings"]["time"]]')" = "['y1']" ] || fail "findings.time should list y1"
expect_has time3/assignments.jsonl '"id":"y1","split_in":"test","split_out":"quarantine"'
expect_has time3/assignments.jsonl '"id":"x1","split_in":"dev","split_out":"dev"'

pass
