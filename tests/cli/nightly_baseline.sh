#!/usr/bin/env bash
# Nightly runs: --baseline marks every link new or known against an earlier run and lists the gone
# ones as resolved; --fail-on-new gates on new links only; --waivers keeps accepted links out of
# the gate until their expiry date (inclusive), reports expired and stale waivers, and rejects a
# bad waivers file with FILE:LINE: FIELD.
source "$(dirname "$0")/lib.bash"

T1="A train leaves the station at nine and travels sixty miles per hour; how far has it gone by noon?"
T2="Mia has four boxes with twelve pencils in each box and gives away ten pencils; how many are left?"
T3="A rectangle is eight metres long and five metres wide; what is the area of the rectangle in square metres?"
T4="Sam reads twenty pages every evening for two weeks; how many pages does he read altogether?"
cat >test.jsonl <<J
{"id":"t1","text":"$T1"}
{"id":"t2","text":"$T2"}
{"id":"t3","text":"$T3"}
{"id":"t4","text":"$T4"}
J
other() { # other ID N: a seen row about something else
    printf '{"id":"%s","text":"The museum opens at ten on weekdays and the garden tour number %s starts after lunch."}\n' "$1" "$2"
}
{ printf '{"id":"d1","text":"%s"}\n{"id":"d2","text":"%s"}\n' "$T1" "$T2"; other d3 3; other d4 4; } >dev1.jsonl
# the next night: d2 is gone (its link resolved), d5 copies t3 (a new link), d6 is added and clean
{ printf '{"id":"d1","text":"%s"}\n{"id":"d5","text":"%s"}\n' "$T1" "$T3"; other d3 3; other d4 4; other d6 6; } >dev2.jsonl

audit() { la audit --dev "$1" --test test.jsonl --embed none --out "$2" "${@:3}"; }
status_of() { # status_of DIR HELD SEEN: the baseline field of that link in DIR/pairs.jsonl
    python3 - "$1/pairs.jsonl" "$2" "$3" <<'PY'
import json, sys
for line in open(sys.argv[1]):
    p = json.loads(line)
    if p["id_b"] == sys.argv[2] and p["id_a"] == sys.argv[3]:
        print(p.get("baseline"), p.get("waived"))
        break
else:
    print("absent")
PY
}

check "night 1 without the new options: links t1~d1 and t2~d2, exit 1, no baseline fields"
audit dev1.jsonl n1
expect_rc 1
[ "$(wc -l <n1/pairs.jsonl)" -eq 2 ] || fail "2 links in night 1"
expect_lacks n1/pairs.jsonl '"baseline"'
expect_lacks n1/pairs.jsonl '"text_hash_a"'
expect_lacks n1/report.md "Since the baseline"

check "--fail-on-new without --baseline is a usage error"
audit dev2.jsonl bad --fail-on-new
expect_rc 2
expect_has err.txt "--fail-on-new gates on the links that are new since a baseline: give --baseline DIR"
[ ! -e bad ] || fail "bad written"

check "night 2 against night 1: t3~d5 new, t1~d1 known, t2~d2 resolved"
audit dev2.jsonl n2 --baseline n1
expect_rc 1
[ "$(status_of n2 t3 d5)" = "new None" ] || fail "t3~d5: $(status_of n2 t3 d5)"
[ "$(status_of n2 t1 d1)" = "known None" ] || fail "t1~d1: $(status_of n2 t1 d1)"
[ "$(json_get n2/report.json 'j["findings"]["baseline"]["links"]')" = "{'new': 1, 'known': 1, 'resolved': 1}" ] ||
    fail "counts: $(json_get n2/report.json 'j["findings"]["baseline"]["links"]')"
[ "$(json_get n2/report.json '[(x["id_b"], x["id_a"], x["kinds"]) for x in j["findings"]["baseline"]["resolved"]]')" = \
  "[('t2', 'd2', ['exact', 'near'])]" ] || fail "resolved list"
expect_has n2/report.md "**1 new**, 1 known and 1 resolved links"
expect_has out.txt "since the baseline: 1 new, 1 known, 1 resolved links"

check "--fail-on-new exits 1 when a link is new"
audit dev2.jsonl n2 --baseline n1 --fail-on-new
expect_rc 1
[ "$(json_get n2/report.json 'j["findings"]["gating_pairs"]')" = 1 ] || fail "one gating pair (the new one)"
expect_has n2/report.junit.xml "t3"
expect_lacks n2/report.junit.xml "t1"

check "--fail-on-new exits 0 when nothing is new (night 2 again, against itself)"
audit dev2.jsonl n3 --baseline n2 --fail-on-new
expect_rc 0
[ "$(json_get n3/report.json 'j["findings"]["baseline"]["links"]')" = "{'new': 0, 'known': 2, 'resolved': 0}" ] ||
    fail "all known: $(json_get n3/report.json 'j["findings"]["baseline"]["links"]')"
expect_has n3/report.md "Only new links and rows fail the run (--fail-on-new)."

check "an edited row makes its link new (text hashes), a reformatted one does not"
{ printf '{"id":"d1","text":"%s Answer in miles."}\n{"id":"d5","text":"%s"}\n' "$T1" "$(echo "$T3" | tr a-z A-Z)"
  other d3 3; other d4 4; other d6 6; } >dev3.jsonl
audit dev3.jsonl n4 --baseline n3 --fail-on-new
expect_rc 1
[ "$(status_of n4 t1 d1)" = "new None" ] || fail "edited t1~d1: $(status_of n4 t1 d1)"
[ "$(status_of n4 t3 d5)" = "known None" ] || fail "reformatted t3~d5: $(status_of n4 t3 d5)"
[ "$(json_get n4/report.json '[x["id_a"] for x in j["findings"]["baseline"]["resolved"]]')" = "['d1']" ] ||
    fail "the old t1~d1 is resolved"

check "a waiver keeps the new link out of the gate through its expiry date"
cat >w.jsonl <<'J'
{"heldout_id":"t3","seen_id":"d5","reason":"d5 is the published worked example","accepted_by":"r.lee","expires":"2030-01-01"}
{"heldout_id":"t9","seen_id":"d9","kind":"near","reason":"removed last week","accepted_by":"r.lee","expires":"2030-06-30"}
J
for today in 2029-12-31 2030-01-01; do
    audit dev2.jsonl n5 --baseline n1 --fail-on-new --waivers w.jsonl --today $today
    expect_rc 0
done
[ "$(status_of n5 t3 d5)" = "new True" ] || fail "t3~d5 listed as new and waived: $(status_of n5 t3 d5)"
expect_has n5/pairs.jsonl '"reason":"d5 is the published worked example","accepted_by":"r.lee","expires":"2030-01-01","state":"active"'
[ "$(json_get n5/report.json '[j["findings"]["waivers"][k] for k in ("today","active","expired","stale","links_waived")]')" = \
  "['2030-01-01', 1, 0, 1, 1]" ] || fail "waiver counts"
[ "$(json_get n5/report.json '[w["state"] for w in j["findings"]["waivers"]["list"]]')" = "['active', 'stale']" ] ||
    fail "waiver states"
expect_has n5/report.md "1 active (1 links waived: listed, not gating), 0 expired (they waive nothing), 1 stale"
expect_has out.txt "waivers: 1 active (1 links waived), 0 expired, 1 stale"

check "the day after its expiry the waiver is expired and the link fails again"
audit dev2.jsonl n5 --baseline n1 --fail-on-new --waivers w.jsonl --today 2030-01-02
expect_rc 1
[ "$(status_of n5 t3 d5)" = "new False" ] || fail "t3~d5 not waived: $(status_of n5 t3 d5)"
expect_has n5/pairs.jsonl '"state":"expired"'
[ "$(json_get n5/report.json '[w["state"] for w in j["findings"]["waivers"]["list"]]')" = "['expired', 'stale']" ] ||
    fail "the first expired, the second still stale"

check "waivers without a baseline act on the whole gate; a waiver of a kind the link lacks is stale"
cat >w2.csv <<'C'
heldout_id,seen_id,kind,reason,accepted_by,expires
t1,d1,,known copy in the tutorial,r.lee,2030-01-01
t3,d5,semantic,reviewed as semantic only,r.lee,2030-01-01
C
audit dev2.jsonl n6 --waivers w2.csv --today 2029-01-01
expect_rc 1
[ "$(status_of n6 t1 d1)" = "None True" ] || fail "t1~d1 waived: $(status_of n6 t1 d1)"
[ "$(status_of n6 t3 d5)" = "None False" ] || fail "t3~d5 not waived: $(status_of n6 t3 d5)"
[ "$(json_get n6/report.json '[w["state"] for w in j["findings"]["waivers"]["list"]]')" = "['active', 'stale']" ] ||
    fail "csv waiver states"
check "a waiver of one kind waives that kind only: t3~d5 is exact and near"
sed -i 's/semantic,reviewed as semantic only/exact,reviewed/' w2.csv
audit dev2.jsonl n6 --waivers w2.csv --today 2029-01-01
expect_rc 1
[ "$(json_get n6/report.json '[w["state"] for w in j["findings"]["waivers"]["list"]]')" = "['active', 'active']" ] ||
    fail "both active"
[ "$(json_get n6/report.json 'j["findings"]["gating_pairs"]')" = 1 ] || fail "t3~d5 still fails through near"
sed -i 's/exact,reviewed/,reviewed/' w2.csv
audit dev2.jsonl n6 --waivers w2.csv --today 2029-01-01
expect_rc 0

check "bad waivers files stop the run with FILE:LINE: FIELD and write nothing"
bad_waiver() { # bad_waiver LINE2 MESSAGE: a file whose second entry is LINE2
    printf '%s\n%s\n' '{"heldout_id":"t3","seen_id":"d5","reason":"r","accepted_by":"a","expires":"2030-01-01"}' "$1" >wb.jsonl
    audit dev2.jsonl nb --waivers wb.jsonl
    expect_rc 2
    expect_has err.txt "$2"
    [ ! -e nb ] || fail "nb written"
}
bad_waiver '{"heldout_id":"t1","seen_id":"d1","reason":"r","accepted_by":"a","expires":"2030-02-30"}' \
    "wb.jsonl:2: expires: expected a date YYYY-MM-DD that exists on the calendar"
bad_waiver '{"heldout_id":"t1","seen_id":"d1","reason":"r","accepted_by":"a","expires":"01/02/2030"}' "wb.jsonl:2: expires"
bad_waiver '{"heldout_id":"t1","seen_id":"d1","reason":" ","accepted_by":"a","expires":"2030-01-01"}' \
    "wb.jsonl:2: reason: expected a non-empty string"
bad_waiver '{"heldout_id":"t1","seen_id":"d1","reason":"r","expires":"2030-01-01"}' "wb.jsonl:2: accepted_by: missing"
bad_waiver '{}' "wb.jsonl:2: heldout_id: missing"
bad_waiver '{"heldout_id":"t1","seen_id":"d1","reason":"r","accepted_by":"a","expiry":"2030-01-01"}' \
    "wb.jsonl:2: expiry: not a field of a waiver"
bad_waiver '{"heldout_id":"t1","seen_id":"d1","kind":"copy","reason":"r","accepted_by":"a","expires":"2030-01-01"}' \
    "wb.jsonl:2: kind: expected family, time, exact, near or semantic"
bad_waiver '{"heldout_id":"t3","seen_id":"d5","kind":"near","reason":"again","accepted_by":"b","expires":"2031-01-01"}' \
    "wb.jsonl:2: waives the link t3 ~ d5 (near) that line 1 waives already (every kind)"
bad_waiver '{"heldout_id":"t1","seen_id":"d1",' "wb.jsonl:2: expected one JSON object per line"

check "a baseline that is not an audit's output folder: exit 2"
audit dev2.jsonl nb --baseline test.jsonl
expect_rc 2
expect_has err.txt "--baseline test.jsonl: expected the output folder of an earlier leakaudit audit"
mkdir -p notreport
audit dev2.jsonl nb --baseline notreport
expect_rc 2
expect_has err.txt "notreport/report.json"
cp -r n1 n1edit
printf '{"id_a":"d9","split_a":"dev","id_b":"t9","split_b":"test","kinds":["bogus"],"grade":null,"gates":true}\n' >>n1edit/pairs.jsonl
audit dev2.jsonl nb --baseline n1edit
expect_rc 2
expect_has err.txt "n1edit/pairs.jsonl:3: kinds: expected a non-empty array of kind names"
[ ! -e nb ] || fail "nb written"
pass
