#!/usr/bin/env python3
"""Score a translation benchmark (make_sets.py).

  score.py SET_DIR REPORT_DIR      an audit's pairs.jsonl: per held-out row through the default gate
                                   (a gating link: grade copy or near) and through the semantic tier
                                   (any semantic link), and per pair
  score.py SET_DIR --sweep T.npy D.npy   vectors of test.jsonl and dev.jsonl (leakaudit embed, in file
                                   order): per held-out row precision and recall of "some seen row at
                                   cosine >= t" for a range of t, and the best recall at precision
                                   0.95 over every threshold, by cosine (what the audit scores) and,
                                   for comparison, by ratio margin alone and by "cosine at the
                                   default threshold or ratio margin" (numpy; the audit scores the
                                   latter with k = 16 and 1.065, its best seen row only, cosine >= 0.85)

A held-out row is flagged when it has a link; it is correct when its planted translation is among its
links; precision = correct / flagged, recall = correct / planted.
"""
import json
import sys


def rows(p):
    return [json.loads(line) for line in open(p, encoding="utf-8") if line.strip()]


def per_row(links, truth, name):
    """links: set of (dev, test) pairs."""
    flagged = {b for a, b in links}
    correct = {b for a, b in links if truth.get(b) == a}
    p = len(correct) / max(1, len(flagged))
    r = len(correct) / max(1, len(truth))
    print(f"{name}: {len(links)} links, {len(flagged)} rows flagged, {len(correct)} of {len(truth)} planted rows "
          f"linked to their translation: precision {p:.3f}, recall {r:.3f}")
    return p, r


def audit(setdir, rep):
    truth = {t["test"]: t["dev"] for t in rows(f"{setdir}/truth.jsonl")}
    pairs = rows(f"{rep}/pairs.jsonl")
    sem = json.load(open(f"{rep}/report.json"))["findings"]["semantic"]
    print(f"embedding: {sem['embedding']} ({sem.get('model', {}).get('name', '-')}), threshold {sem['threshold']} "
          f"({sem.get('threshold_source', '')})")
    per_row({(p["id_a"], p["id_b"]) for p in pairs if p["gates"]}, truth, "through the gate (copy or near)")
    per_row({(p["id_a"], p["id_b"]) for p in pairs if "semantic" in p["kinds"]}, truth, "semantic links")
    grades = {}
    for p in pairs:
        if "semantic" in p["kinds"]:
            k = (truth.get(p["id_b"]) == p["id_a"], p["grade"])
            grades[k] = grades.get(k, 0) + 1
    print("semantic links by (planted, grade): " + ", ".join(f"{'planted' if a else 'other'} {g} {n}"
                                                            for (a, g), n in sorted(grades.items(), key=str)))


UNION_COSINE = 0.92  # multilingual-e5-small's default threshold


def sweep(setdir, tv, dv):
    import numpy as np
    test, dev = rows(f"{setdir}/test.jsonl"), rows(f"{setdir}/dev.jsonl")
    truth = {t["test"]: t["dev"] for t in rows(f"{setdir}/truth.jsonl")}
    T, D = np.load(tv), np.load(dv)
    S = T @ D.T
    col = {r["id"]: j for j, r in enumerate(dev)}
    own = np.array([S[i, col[truth[r["id"]]]] if r["id"] in truth else np.nan for i, r in enumerate(test)])
    best = S.max(1)
    planted = ~np.isnan(own)
    print(f"{len(test)} held-out rows ({planted.sum()} planted), {len(dev)} seen rows")
    print("cosine of a planted translation: min %.3f, 10%% %.3f, median %.3f" %
          (np.nanmin(own), np.nanpercentile(own, 10), np.nanmedian(own)))
    others = S.copy()
    for i, r in enumerate(test):
        if r["id"] in truth:
            others[i, col[truth[r["id"]]]] = -1
    o = others.max(1)
    print("best other seen row: median %.3f, 90%% %.3f, 99%% %.3f, max %.3f" %
          (np.median(o), np.percentile(o, 90), np.percentile(o, 99), o.max()))
    print("threshold  flagged  correct  precision  recall   (per held-out row)")
    for t in np.arange(0.80, 0.96, 0.01):
        flagged = best >= t
        correct = planted & (np.nan_to_num(own, nan=-1) >= t)
        p = correct.sum() / max(1, flagged.sum())
        r = correct.sum() / planted.sum()
        print(f"  {t:.2f}     {flagged.sum():5d}    {correct.sum():5d}    {p:.3f}     {r:.3f}")
    best_at_precision(S, own, planted, "cosine")
    for k in (4, 16):
        # ratio margin (bitext mining): cosine over the mean of both sides' k best cosines
        mt, md = np.sort(S, 1)[:, -k:].mean(1), np.sort(S, 0)[-k:, :].mean(0)
        M = S / ((mt[:, None] + md[None, :]) / 2)
        own_m = np.array([M[i, col[truth[r["id"]]]] if r["id"] in truth else np.nan for i, r in enumerate(test)])
        best_at_precision(M, own_m, planted, f"ratio margin k={k} alone (not what the audit scores)")
        # the union: every link cosine gives (copies keep their links however many seen rows
        # repeat them), plus the pairs whose margin stands out
        for m in (1.045, 1.055, 1.065):
            L = (S >= UNION_COSINE) | (M >= m)
            flagged = L.any(1).sum()
            correct = sum(1 for i, r in enumerate(test) if r["id"] in truth and L[i, col[truth[r["id"]]]])
            print(f"cosine >= {UNION_COSINE} or ratio margin k={k} >= {m}: precision {correct / max(1, flagged):.3f}, "
                  f"recall {correct / planted.sum():.3f} ({flagged} rows flagged; every pair a candidate, no cosine floor)")


def best_at_precision(S, own, planted, name, floor=0.95):
    """The highest per-row recall at precision >= floor over every threshold of score matrix S."""
    import numpy as np
    best = S.max(1)
    own = np.nan_to_num(own, nan=-np.inf)
    top = None
    for t in np.unique(best)[::-1]:
        flagged = (best >= t).sum()
        correct = (planted & (own >= t)).sum()
        if correct / flagged >= floor and (top is None or correct > top[1]):
            top = (t, correct, flagged)
    if top is None:
        print(f"best recall at precision >= {floor} by {name}: none")
    else:
        t, c, f = top
        print(f"best recall at precision >= {floor} by {name}: {c / planted.sum():.3f} at threshold {t:.4f} "
              f"(precision {c / f:.3f})")


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[2] == "--sweep":
        sweep(sys.argv[1], sys.argv[3], sys.argv[4])
    else:
        audit(sys.argv[1], sys.argv[2])
