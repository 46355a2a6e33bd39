#!/usr/bin/env python3
"""Gating figures of an audit's pairs.jsonl on the document sets (see make_sets.py, run.sh).

  score_docs.py site_policy WORK_DIR PAIRS.jsonl
      held-out revisions whose policy has an older revision seen: the share with any link to one of
      them and the share with a gating one; links and gating links between different policies.
  score_docs.py licenses PAIRS.jsonl
      links and gating links between the copyright files of different packages, by grade.
  score_docs.py generator TRUTH.jsonl PAIRS.jsonl
      the near-copy generator's corpus (near_bench --write): gating recall of its planted copies by
      case, edit rate and length, and gating precision.
"""
import json, sys
from collections import Counter, defaultdict


def rows(path):
    return [json.loads(l) for l in open(path)]


def site_policy(work, pairs_path):
    family = {t["id"]: t["family"] for t in rows(f"{work}/site_policy_truth.jsonl")}
    seen_families = {family[r["id"]] for r in rows(f"{work}/site_policy_dev.jsonl")}
    want = [r["id"] for r in rows(f"{work}/site_policy_test.jsonl") if family[r["id"]] in seen_families]
    pairs = rows(pairs_path)
    own = [p for p in pairs if family[p["id_a"]] == family[p["id_b"]]]
    cross = [p for p in pairs if family[p["id_a"]] != family[p["id_b"]]]
    linked, gated = {p["id_b"] for p in own}, {p["id_b"] for p in own if p["gates"]}
    print(f"revisions {len(want)}  linked {sum(t in linked for t in want) / len(want):.3f}  "
          f"gating {sum(t in gated for t in want) / len(want):.3f}  links {len(pairs)}  "
          f"cross-policy {len(cross)}  cross-policy gating {sum(p['gates'] for p in cross)}")


def licenses(pairs_path):
    pairs = rows(pairs_path)
    print(f"links {len(pairs)}  gating {sum(p['gates'] for p in pairs)}  grades "
          + " ".join(f"{g} {n}" for g, n in sorted(Counter(p["grade"] for p in pairs).items())))


def generator(truth_path, pairs_path):
    gating = {(p["id_a"], p["id_b"]) for p in rows(pairs_path) if p["gates"]}
    total, found, planted = Counter(), Counter(), set()
    for t in rows(truth_path):
        case = "quote" if t["case"] != "edit" else f"edit{t['rate']} {'long' if t['long'] else 'short'}"
        total[case] += 1
        found[case] += (t["dev"], t["test"]) in gating
        planted.add((t["dev"], t["test"]))
    order = sorted(total, key=lambda c: (c != "quote", int(c.split()[0][4:]) if c != "quote" else 0, c))
    print(f"gating {len(gating)}  precision {len(gating & planted) / max(1, len(gating)):.4f}  "
          + "  ".join(f"{c} {found[c] / total[c]:.3f}" for c in order))


if __name__ == "__main__":
    what = sys.argv[1]
    {"site_policy": site_policy, "licenses": licenses, "generator": generator}[what](*sys.argv[2:])
