#!/usr/bin/env bash
# A test question copied into dev with different case, spacing and Unicode form is found: exit 1
# and the pair in pairs.jsonl with kind "exact". Covers full-width letters, NBSP and tabs,
# decomposed Vietnamese accents and Chinese with full-width punctuation.
source "$(dirname "$0")/lib.bash"

cat >test.jsonl <<'J'
{"id":"t-capital","text":"What is the capital of Australia?"}
{"id":"t-vi","text":"Thủ đô của Việt Nam là gì?"}
{"id":"t-zh","text":"中国的首都是哪个城市？"}
{"id":"t-clean","text":"How many sides does a hexagon have?"}
J
# The copies, written with JSON escapes so the different forms are visible:
#  - d-capital: upper case, a tab, NBSP (\u00a0) and full-width "Australia" (\uff21...)
#  - d-vi: lower case and decomposed: u + U+0309, o + U+0302, e + U+0323 + U+0302, a + U+0300, i + U+0300
#  - d-zh: the ASCII question mark instead of the full-width one and extra spaces
cat >dev.jsonl <<'J'
{"id":"d-capital","text":"  WHAT IS\tTHE  capital\u00a0of \uff21\uff55\uff53\uff54\uff52\uff41\uff4c\uff49\uff41?"}
{"id":"d-other","text":"What is the capital of Austria?"}
{"id":"d-vi","text":"thu\u0309 \u0111o\u0302 cu\u0309a vie\u0323\u0302t nam la\u0300 gi\u0300?"}
{"id":"d-zh","text":" 中国的首都是哪个城市? "}
J

check "audit finds the copies: exit 1"
la audit --dev dev.jsonl --test test.jsonl --out out
expect_rc 1
expect_has out.txt "leaks found"

check "pairs.jsonl links exactly the three copies with kind exact, the test row as b"
python3 - out/pairs.jsonl <<'PY' || fail "pairs.jsonl is not as expected"
import json, sys
pairs = [json.loads(l) for l in open(sys.argv[1])]
# later tiers (near, semantic) may add kinds or pairs; the exact links must be exactly these
got = sorted((p["id_a"], p["split_a"], p["id_b"], p["split_b"]) for p in pairs if "exact" in p["kinds"])
want = sorted([("d-capital", "dev", "t-capital", "test"), ("d-vi", "dev", "t-vi", "test"),
               ("d-zh", "dev", "t-zh", "test")])
if got != want:
    print("got ", got)
    print("want", want)
    sys.exit(1)
for p in pairs:
    assert isinstance(p["scores"], dict), p
    assert not ({"family", "time"} & set(p["kinds"])), p
PY

check "the copies leave both sides; the untouched rows keep their place"
python3 - out/assignments.jsonl <<'PY' || fail "assignments.jsonl is not as expected"
import json, sys
got = {r["id"]: r["split_out"] for r in map(json.loads, open(sys.argv[1]))}
want = {"t-capital": "quarantine", "t-vi": "quarantine", "t-zh": "quarantine", "d-capital": "quarantine",
        "d-vi": "quarantine", "d-zh": "quarantine"}
assert {k: got[k] for k in want} == want, got
assert got["t-clean"] == "test", got
PY
expect_has out/test.jsonl '"t-clean"'
expect_lacks out/test.jsonl '"t-capital"'

check "--fail-on exact alone: exit 1"
la audit --dev dev.jsonl --test test.jsonl --fail-on exact --out out-exact
expect_rc 1

check "report.json counts the exact links"
[ "$(json_get out/report.json 'j["findings"]["pairs_by_kind"]["exact"]')" = 3 ] || fail "pairs_by_kind.exact != 3"

check "--normalize none misses all three copies (no exact link, exit 0 for --fail-on exact)"
la audit --dev dev.jsonl --test test.jsonl --normalize none --fail-on exact --out out-none
expect_rc 0
expect_lacks out-none/pairs.jsonl '"exact"'

check "--normalize space finds only a copy that differs in spacing"
printf '%s\n' '{"id":"s1","text":"What is  the capital of\tAustralia? "}' >spaced.jsonl
la audit --dev spaced.jsonl --test test.jsonl --normalize space --fail-on exact --out out-space
expect_rc 1
[ "$(grep -c '"exact"' out-space/pairs.jsonl)" -eq 1 ] || fail "expected one exact pair with --normalize space"
expect_has out-space/pairs.jsonl '"id_a":"s1","split_a":"dev","id_b":"t-capital"'

pass
