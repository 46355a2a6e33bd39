#!/usr/bin/env bash
# Progress on stderr (--progress auto|always|never|json, --quiet/-q): json gives one object per line
# for every stage from read to write, always gives plain lines, auto gives none when stderr is not a
# terminal, -q silences everything; the outputs never depend on it; a bad mode exits 2.
source "$(dirname "$0")/lib.bash"
ex="$SRC/examples/gsm8k"
args=(--dev "$ex/dev.jsonl" --test "$ex/test.jsonl" --text-field question --cutoff 2026-01-01 --embed lexical)

check "--progress json: one JSON object per line, begin and end of every stage, read to write"
la audit "${args[@]}" --progress json --out json
expect_rc 1
python3 - err.txt <<'PY' || fail "progress lines"
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
stages = [l["stage"] for l in lines if l["progress"] == "end"]
want = ["read", "normalize", "exact, family and time links", "near copies: signatures", "near copies: candidates",
        "near copies: verification", "semantic copies", "grades and decisions", "write"]
assert stages == want, stages
begun = [l["stage"] for l in lines if l["progress"] == "begin"]
assert begun == want, begun
read = [l for l in lines if l["stage"] == "read" and l["progress"] == "end"][0]
assert read["total"] == 2 and read["bytes"] > 0 and read["note"].endswith(" rows"), read
norm = [l for l in lines if l["stage"] == "normalize" and l["progress"] == "end"][0]
assert norm["done"] == norm["total"] == 1307, norm
end = {l["stage"]: l for l in lines if l["progress"] == "end"}
for phase in ("signatures", "candidates"):
    e = end["near copies: " + phase]
    assert e["unit"] == "rows" and e["done"] == e["total"] == 1307, e
v = end["near copies: verification"]
assert v["unit"] == "candidates" and v["done"] == v["total"] > 0 and v["note"].endswith(" links"), v
PY

check "--progress always: plain lines; the outputs are those of --progress never"
la audit "${args[@]}" --progress always --out always
expect_rc 1
expect_has err.txt "leakaudit audit: near copies: signatures: 1,307 rows in "
la audit "${args[@]}" --progress never --out never
expect_rc 1
[ ! -s err.txt ] || fail "--progress never wrote to stderr: $(cat err.txt)"
for f in pairs.jsonl assignments.jsonl clusters.jsonl quarantine.jsonl report.md; do
  cmp -s always/$f never/$f || fail "$f differs with progress on"
  cmp -s json/$f never/$f || fail "$f differs with json progress"
done

check "--progress auto with stderr not a terminal: nothing; -q and --quiet: nothing at all"
la audit "${args[@]}" --out auto
expect_rc 1
[ ! -s err.txt ] || fail "auto wrote progress to a file: $(cat err.txt)"
la audit "${args[@]}" --progress always -q --out q
expect_rc 1
[ ! -s err.txt ] && [ ! -s out.txt ] || fail "-q printed something"

check "the encoder reports its rows as it goes (when the model is installed)"
# (the folder is looked at directly: `leakaudit models` hashes every model, minutes under the sanitizers)
if [ -s "${LEAKAUDIT_MODELS:-$SRC/models}/all-MiniLM-L6-v2/model.safetensors" ]; then
  head -n 40 "$ex/dev.jsonl" >d40.jsonl
  head -n 5 "$ex/test.jsonl" >t5.jsonl
  la audit --dev d40.jsonl --test t5.jsonl --text-field question --embed model --progress json --out enc
  [ "$rc" -le 1 ] || fail "audit with the model: exit $rc"
  python3 - err.txt <<'PY' || fail "encoder progress"
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
enc = [l for l in lines if l["stage"] == "semantic copies: encoding"]
assert enc and enc[0]["progress"] == "begin" and enc[-1]["progress"] == "end", enc
assert enc[0]["unit"] == "rows" and enc[0]["total"] == 45 and enc[-1]["done"] == enc[0]["total"], enc
PY
else
  echo "  (model not installed: this check is skipped)"
fi

check "--progress bogus: exit 2, naming the modes"
la audit "${args[@]}" --progress bogus --out bad
expect_rc 2
expect_has err.txt "--progress bogus: expected auto, always, never or json"
[ ! -e bad ] || fail "--out written"
pass
