#!/usr/bin/env python3
"""A translation-leak benchmark from real human translations: the message catalogues of Debian
packages (catalogs.py), English against Chinese (zh_CN) and Vietnamese (vi).

  test.jsonl   held out: N English messages (half drawn from the Chinese catalogues, half from the
               Vietnamese ones)
  dev.jsonl    seen: the translation of a known share of them (planted: every other held-out row,
               its own catalogue's translation), plus M translated messages of the same catalogues
               whose English is not held out (hard negatives: the same program's other messages,
               same-template strings such as "cannot open %s" against "cannot read %s")
  truth.jsonl  {"test": id, "dev": id} for every planted translation

English texts are compared after lower-casing and dropping punctuation, so two catalogues' copies of
one message count as one message (a translation of a held-out message never enters dev unplanted).
usage: make_sets.py OUT_DIR [N=600] [M=3000] [SEED=7]
"""
import json
import os
import random
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from catalogs import catalog_pairs  # noqa: E402


def key(s):
    return " ".join(re.findall(r"[a-z0-9%]+", s.lower()))


def main():
    out = sys.argv[1]
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 600
    m = int(sys.argv[3]) if len(sys.argv) > 3 else 3000
    rnd = random.Random(int(sys.argv[4]) if len(sys.argv) > 4 else 7)
    os.makedirs(out, exist_ok=True)
    langs = {"zh_CN": catalog_pairs("zh_CN"), "vi": catalog_pairs("vi")}
    held, held_keys = [], set()
    for lang, pairs in langs.items():
        rnd.shuffle(pairs)
        k = 0
        for cat, en, tr in pairs:
            if k == n // 2:
                break
            if key(en) in held_keys:
                continue
            held_keys.add(key(en))
            held.append((lang, cat, en, tr))
            k += 1
    test, dev, truth = [], [], []
    for i, (lang, cat, en, tr) in enumerate(held):
        test.append({"id": f"t{i}", "text": en, "lang": lang, "catalogue": cat})
        if i % 2 == 0:
            dev.append({"id": f"p{i}", "text": tr, "lang": lang, "catalogue": cat, "planted": f"t{i}"})
            truth.append({"test": f"t{i}", "dev": f"p{i}"})
    cats = {(lang, cat) for lang, cat, _, _ in held}
    for lang, pairs in langs.items():
        pool = [(c, en, tr) for c, en, tr in pairs if key(en) not in held_keys and (lang, c) in cats]
        rnd.shuffle(pool)
        for j, (cat, en, tr) in enumerate(pool[: m // 2]):
            dev.append({"id": f"n{lang}{j}", "text": tr, "lang": lang, "catalogue": cat, "english": en})
    rnd.shuffle(dev)
    for name, rows in (("test", test), ("dev", dev), ("truth", truth)):
        with open(os.path.join(out, f"{name}.jsonl"), "w", encoding="utf-8") as f:
            for r in rows:
                f.write(json.dumps(r, ensure_ascii=False) + "\n")
    print(f"{len(test)} held-out English messages, {len(truth)} of them planted; dev {len(dev)} translations "
          f"({len(dev) - len(truth)} unrelated) from {len(cats)} catalogues -> {out}")


if __name__ == "__main__":
    main()
