#!/usr/bin/env bash
# The split maker ties revisions of one document without family ids: near copies join a group, so
# a document revised across the cutoff is quarantined whole instead of landing on both sides; and
# reworded copies through their embeddings, by cosine or (--semantic-margin) by the ratio margin.
source "$(dirname "$0")/lib.bash"

cat >docs.jsonl <<'J'
{"id":"refund-2025","available_on":"2025-11-02","text":"Refund policy. Customers may return any unused item within 30 days of delivery for a full refund. Items must be in their original packaging and include the receipt. Refunds are issued to the original payment method within five business days."}
{"id":"refund-2026","available_on":"2026-02-10","text":"Refund policy. Customers may return any unused item within 14 days of delivery for a full refund. Items must be in their original packaging and include the receipt. Refunds are issued to the original payment method within five business days."}
{"id":"privacy-2025","available_on":"2025-10-01","text":"Privacy notice. We collect the email address you give us and use it only to send order updates. We never sell personal data to third parties."}
{"id":"shipping-2026","available_on":"2026-03-01","text":"Shipping times. Orders placed before noon ship the same day; express delivery arrives the next working day in most regions."}
J

check "near copies join a group: the revised refund policy is quarantined whole"
la split --cutoff 2026-01-01 docs.jsonl --out grouped
expect_rc 0
python3 - grouped/assignments.jsonl <<'PY' || fail "assignments are not as expected"
import json, sys
out = {r["id"]: r["split_out"] for r in map(json.loads, open(sys.argv[1]))}
assert out == {"refund-2025": "quarantine", "refund-2026": "quarantine", "privacy-2025": "dev", "shipping-2026": "test"}, out
PY

check "--near off: without family ids the two revisions land on both sides"
la split --cutoff 2026-01-01 --near off docs.jsonl --out apart
python3 - apart/assignments.jsonl <<'PY' || fail "assignments are not as expected"
import json, sys
out = {r["id"]: r["split_out"] for r in map(json.loads, open(sys.argv[1]))}
assert out["refund-2025"] == "dev" and out["refund-2026"] == "test", out
PY

check "reworded copies (no shared wording) join a group through their embeddings"
cat >tickets.jsonl <<'J'
{"id":"ticket-a","available_on":"2025-12-01","text":"My card was charged twice for one order.","vec":[1,0,0.1]}
{"id":"ticket-b","available_on":"2026-01-15","text":"Duplicate payment appeared on the statement after buying once.","vec":[0.98,0,0.12]}
{"id":"ticket-c","available_on":"2026-02-01","text":"How do I change my shipping address?","vec":[0,1,0]}
J
la split --cutoff 2026-01-01 tickets.jsonl --out plain
python3 - plain/assignments.jsonl <<'PY' || fail "without embeddings the reworded pair is split"
import json, sys
out = {r["id"]: r["split_out"] for r in map(json.loads, open(sys.argv[1]))}
assert out == {"ticket-a": "dev", "ticket-b": "test", "ticket-c": "test"}, out
PY
la split --cutoff 2026-01-01 --embedding-field vec tickets.jsonl --out field
expect_rc 0
python3 - field/assignments.jsonl <<'PY' || fail "with embeddings the reworded pair is one group"
import json, sys
out = {r["id"]: r["split_out"] for r in map(json.loads, open(sys.argv[1]))}
assert out == {"ticket-a": "quarantine", "ticket-b": "quarantine", "ticket-c": "test"}, out
PY
python3 - <<'PY'
import struct
rows = [(1, 0, 0.1), (0.98, 0, 0.12), (0, 1, 0)]
hdr = "{'descr': '<f4', 'fortran_order': False, 'shape': (3, 3), }"
hdr += " " * ((64 - (10 + len(hdr) + 1) % 64) % 64) + "\n"
with open("tickets.npy", "wb") as f:
    f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(hdr)) + hdr.encode())
    for r in rows: f.write(struct.pack("<3f", *r))
PY
la split --cutoff 2026-01-01 --embeddings tickets.npy tickets.jsonl --out npy
expect_rc 0
expect_same field/assignments.jsonl npy/assignments.jsonl

check "--semantic-margin: a pair below the threshold that stands out joins a group; a template's rows do not"
# 20 rows of one template (every two at cosine 0.78) and one pair at 0.78 with nothing else near
# it, all below the threshold of 0.82 and each side of the cutoff; the margin (0.78 over the mean
# of both rows' 16 best) is about 1 for a template row and over 10 for the pair
python3 - <<'PY'
import json, math
dim = 32
def unit(i):
    v = [0.0] * dim
    v[i] = 1.0
    return v
a, b = math.sqrt(0.78), math.sqrt(0.22)
rows = []
for i in range(20):
    rows.append({"id": "tmpl-%02d" % i, "available_on": "2025-12-01" if i % 2 else "2026-02-01",
                 "text": "template %d" % i, "vec": [a * x + b * y for x, y in zip(unit(0), unit(1 + i))]})
rows.append({"id": "pair-old", "available_on": "2025-11-20", "text": "one", "vec": [a * x + b * y for x, y in zip(unit(21), unit(22))]})
rows.append({"id": "pair-new", "available_on": "2026-01-20", "text": "two", "vec": [a * x + b * y for x, y in zip(unit(21), unit(23))]})
rows.append({"id": "alone", "available_on": "2026-03-01", "text": "three", "vec": unit(24)})
with open("margin.jsonl", "w") as f:
    for r in rows: f.write(json.dumps(r) + "\n")
PY
for m in off 1.065; do
    la split --cutoff 2026-01-01 --near off --embedding-field vec --semantic-margin "$m" margin.jsonl --out "margin-$m"
    expect_rc 0
done
python3 - margin-off/assignments.jsonl margin-1.065/assignments.jsonl <<'PY' || fail "the margin's groups are not as expected"
import json, sys
off, on = ({r["id"]: r["split_out"] for r in map(json.loads, open(p))} for p in sys.argv[1:])
assert off["pair-old"] == "dev" and off["pair-new"] == "test", off
assert on["pair-old"] == "quarantine" and on["pair-new"] == "quarantine", on
for i in range(20):
    want = "dev" if i % 2 else "test"
    assert off["tmpl-%02d" % i] == want and on["tmpl-%02d" % i] == want, (i, off, on)
assert on["alone"] == "test"
PY
la split --cutoff 2026-01-01 --near off --embedding-field vec margin.jsonl --out margin-default
expect_same margin-off/assignments.jsonl margin-default/assignments.jsonl
python3 - margin-off/report.json margin-1.065/report.json margin-1.065/report.md <<'PY' || fail "the report does not say what joined the groups"
import json, sys
off, on = (json.load(open(p))["grouping"] for p in sys.argv[1:3])
assert off["near"] is False and off["links"] == {"exact": 0, "near": 0, "semantic": 0}, off
assert off["semantic"]["margin"]["ratio"] is None and off["semantic"]["threshold"] == 0.82, off
assert on["links"]["semantic"] == 1 and on["semantic"]["margin"]["links"] == 1, on
m = on["semantic"]["margin"]
assert m["ratio"] == 1.065 and m["k"] == 16 and abs(m["lowest_cosine"] - 0.75) < 1e-9 and m["source"] == "--semantic-margin", m
md = open(sys.argv[3]).read()
assert "semantic links 1 (embeddings from a JSON field; cosine >= 0.82" in md and "ratio margin 1.065 below it, 1 of the links" in md, md
PY
la split --cutoff 2026-01-01 docs.jsonl --out grouped-again
python3 - grouped-again/report.json <<'PY' || fail "the near copies that joined the refund policy are not counted"
import json, sys
g = json.load(open(sys.argv[1]))["grouping"]
assert g == {"links": {"exact": 0, "near": 1, "semantic": 0}, "near": True, "semantic": None}, g
PY

pass
