#!/usr/bin/env bash
# The split maker and the cluster sizes on real revision data, with the family ids hidden.
#   bench/decisions/site_policy.sh [SHARED_DATA_DIR] [BUILD_DIR]
# Prints, for the chronological split at 2022-01-01: policies whose revisions land in both dev and
# test with and without near-copy grouping, and how many rows are placed as the true family ids
# would place them; then the audit's cluster sizes (for the --max-cluster default).
set -euo pipefail
data=${1:-../shared/data}
build=${2:-build}
bin="$build/leakaudit"
src="$data/site-policy/policy_versions.jsonl"
[ -x "$bin" ] || { echo "build first: make (looked for $bin)" >&2; exit 2; }
[ -f "$src" ] || { echo "no $src" >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

python3 - "$src" "$work" <<'PY'
import json, sys
src, work = sys.argv[1], sys.argv[2]
rows = [json.loads(l) for l in open(src)]
with open(work + "/split_in.jsonl", "w") as f, open(work + "/audit_in.jsonl", "w") as g:
    for r in rows:
        rid = "%s@%d" % (r["family"], r["version_idx"])
        f.write(json.dumps({"id": rid, "text": r["text"], "true_family": r["family"], "date": r["date"]}) + "\n")
        side = "dev" if r["version_idx"] < max(1, int(r["n_versions"] * 0.7)) else "test"
        g.write(json.dumps({"id": rid, "text": r["text"], "split": side, "date": r["date"]}) + "\n")
PY

common=(--cutoff 2022-01-01 --date-field date --date-format iso8601 --quiet)
"$bin" split "${common[@]}" --family-field true_family --near off "$work/split_in.jsonl" --out "$work/truth"
"$bin" split "${common[@]}" --near off "$work/split_in.jsonl" --out "$work/plain"
start=$(date +%s.%N)
"$bin" split "${common[@]}" "$work/split_in.jsonl" --out "$work/near"
end=$(date +%s.%N)
"$bin" audit "$work/audit_in.jsonl" --date-field date --date-format iso8601 --max-cluster 0 --quiet --out "$work/audit" || true

python3 - "$work" "$src" "$start" "$end" <<'PY'
import collections, json, sys
work, src, start, end = sys.argv[1], sys.argv[2], float(sys.argv[3]), float(sys.argv[4])
def outcomes(d):
    return {r["id"]: r["split_out"] for r in map(json.loads, open("%s/%s/assignments.jsonl" % (work, d)))}
truth = outcomes("truth")
for name in ("plain", "near"):
    out = outcomes(name)
    sides = collections.defaultdict(set)
    for k, v in out.items():
        sides[k.split("@")[0]].add(v)
    split = sum(1 for s in sides.values() if "dev" in s and "test" in s)
    agree = sum(out[k] == truth[k] for k in truth)
    label = "no grouping (--near off)" if name == "plain" else "near-copy grouping (default)"
    print("split %-30s policies in both dev and test: %2d of %d; rows placed as with true families: %d of %d"
          % (label, split, len(sides), agree, len(truth)))
print("split with near grouping took %.2f s" % (end - start))
fam = {json.loads(l)["family"] for l in open(src)}
sizes = collections.Counter(json.loads(l)["family"] for l in open(src))
clusters = collections.defaultdict(list)
for r in map(json.loads, open(work + "/audit/assignments.jsonl")):
    for why in r["reasons"]:
        if why.startswith("cluster:"):
            clusters[int(why[8:])].append(r["id"].split("@")[0])
largest = sorted(((len(v), len(set(v))) for v in clusters.values()), reverse=True)[:5]
print("audit: %d clusters; largest (rows, policies joined): %s; largest true policy: %d revisions"
      % (len(clusters), largest, max(sizes.values())))
PY
