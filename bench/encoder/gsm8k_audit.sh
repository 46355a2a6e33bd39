#!/usr/bin/env bash
# GSM8K rephrases through a default audit (the built-in model, no vectors given): test.jsonl is
# held out; dev holds the question part of the rephrases of the even-numbered test questions
# (line i of rephrase_test.jsonl rewords line i of test.jsonl) and every train question (same
# style: hard negatives). Per held-out row: flagged when it has a semantic pair, correct when
# its planted rephrase is among them; prints precision and recall per row and per pair.
#   bench/encoder/gsm8k_audit.sh DATA_DIR [extra audit options...]
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
data="${1:?usage: gsm8k_audit.sh DATA_DIR [audit options]}"
shift
out="$root/bench/out/encoder-gsm8k"
mkdir -p "$out"
cmake -S "$root" -B "$root/build-bench" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$root/build-bench" -j2 --target leakaudit >/dev/null
python3 "$root/bench/encoder/gsm8k_sets.py" "$data" "$out"
start=$(date +%s.%N)
set +e
"$root/build-bench/leakaudit" audit --dev "$out/dev.jsonl" --test "$out/test.jsonl" --near off --quiet \
  --out "$out/report" "$@"
set -e
end=$(date +%s.%N)
python3 - "$out/report" "$start" "$end" <<'PY'
import json, sys
rep, t0, t1 = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
s = json.load(open(f"{rep}/report.json"))["findings"]["semantic"]
pairs = [json.loads(l) for l in open(f"{rep}/pairs.jsonl")]
sem = [(p["id_a"], p["id_b"]) for p in pairs if "semantic" in p["kinds"]]
planted = {f"t{i}" for i in range(0, 1319, 2)}
flagged = {b for a, b in sem}
hit_rows = {b for a, b in sem if a == "r" + b[1:]}
tp_pairs = sum(1 for a, b in sem if a == "r" + b[1:])
print(f"embedding: {s['embedding']} ({s.get('model', {}).get('name', '-')}), threshold {s['threshold']}")
print(f"rows (correct when the planted rephrase itself is linked): flagged {len(flagged)}, with their rephrase {len(hit_rows)} of {len(planted)}: "
      f"precision {len(hit_rows) / max(1, len(flagged)):.3f}, recall {len(hit_rows) / len(planted):.3f}")
lenient = flagged & planted
print(f"rows (correct when the row has a planted rephrase, as bench_semantic counts): precision "
      f"{len(lenient) / max(1, len(flagged)):.3f}, recall {len(lenient) / len(planted):.3f}")
print(f"pairs: {len(sem)} semantic, {tp_pairs} planted: precision {tp_pairs / max(1, len(sem)):.3f}, "
      f"recall {tp_pairs / len(planted):.3f}")
print(f"audit wall time {t1 - t0:.1f} s")
PY
