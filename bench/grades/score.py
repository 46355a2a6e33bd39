#!/usr/bin/env python3
"""Precision of gating links and recall of planted copies per case, from an audit's pairs.jsonl.

Usage: score.py TRUTH.jsonl PAIRS.jsonl. A planted copy counts as found when its link fails the
gate (grade copy or near under the default --fail-on); precision is over all gating links.
"""
import json, sys
from collections import Counter

truth = {(t["dev"], t["test"]): t["case"] for t in map(json.loads, open(sys.argv[1]))}
pairs = [json.loads(l) for l in open(sys.argv[2])]
gating = [p for p in pairs if p["gates"]]
hits = {(p["id_a"], p["id_b"]) for p in gating} & set(truth)
total, found = Counter(truth.values()), Counter(truth[k] for k in hits)
order = sorted(total, key=lambda c: (c != "quote", int(c[4:]) if c.startswith("edit") else 0))
print(f"links {len(pairs)}  gating {len(gating)}  precision {len(hits) / max(1, len(gating)):.4f}  "
      + "  ".join(f"{c} {found[c] / total[c]:.3f}" for c in order)
      + "  grades " + " ".join(f"{g} {n}" for g, n in sorted(Counter(p["grade"] for p in pairs).items(), key=str)))
