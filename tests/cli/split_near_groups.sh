#!/usr/bin/env bash
# The split maker ties revisions of one document without family ids: near copies join a group, so
# a document revised across the cutoff is quarantined whole instead of landing on both sides.
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

pass
