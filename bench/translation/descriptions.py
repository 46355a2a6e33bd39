#!/usr/bin/env python3
"""A translation-leak benchmark from Debian's package description translations (DDTP): the long
descriptions of packages in English and their human translations, paragraphs of prose of the size
of a benchmark item (a summary line plus 20 to 200 words), in Chinese, Japanese, Russian, German,
French and Spanish.

  test.jsonl   held out: N English descriptions (an equal share per language)
  dev.jsonl    seen: the translation of every other held-out description (planted), plus M
               translations of other packages' descriptions in the same languages (negatives: other
               packages of the same kind, "Python 3 bindings for ...", "development files for ...")
  truth.jsonl  {"test": id, "dev": id} for every planted translation

Descriptions that share a paragraph or a summary line (a source package's binaries: "0ad-data" and
"0ad-data-common") form one family, and at most one description of a family enters the set, so a
negative never shares text with a held-out description; negatives keep the shared vocabulary and
templates of package descriptions.

Input: the Translation-* files of a Debian release (deb.debian.org/debian/dists/REL/main/i18n/),
downloaded by the caller into I18N_DIR (run.sh --descriptions does it).
usage: descriptions.py I18N_DIR OUT_DIR [N=600] [M=3000] [SEED=7]
"""
import bz2
import json
import lzma
import os
import random
import re
import sys

LANGS = ("zh_CN", "ja", "ru", "de", "fr", "es")


def records(path):
    """(package, md5, text) of each record of a Translation file; text: summary line and body."""
    opener = lzma.open if path.endswith(".xz") else bz2.open
    with opener(path, "rt", encoding="utf-8") as f:
        pkg = md5 = None
        lines = []
        for line in f:
            line = line.rstrip("\n")
            if not line:
                if pkg and lines:
                    yield pkg, md5, lines
                pkg = md5 = None
                lines = []
            elif line.startswith("Package: "):
                pkg = line[9:]
            elif line.startswith("Description-md5: "):
                md5 = line[17:]
            elif line.startswith("Description-"):
                lines = [line.split(": ", 1)[1] if ": " in line else ""]
            elif line.startswith(" ") and lines:
                lines.append(line[1:])
        if pkg and lines:
            yield pkg, md5, lines


def text_of(lines):
    """Summary line, then the paragraphs (" ." separates them), each joined into one line."""
    paras, cur = [lines[0]], []
    for l in lines[1:]:
        if l.strip() == ".":
            if cur:
                paras.append(" ".join(cur))
            cur = []
        else:
            cur.append(l.strip())
    if cur:
        paras.append(" ".join(cur))
    return paras


def key(s):
    return " ".join(re.findall(r"[a-z0-9]+", s.lower()))


def families(english):
    """md5 -> family id: descriptions sharing a summary line or a paragraph are one family."""
    parent = {m: m for m in english}

    def find(x):
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x
    owner = {}
    for m, paras in english.items():
        for p in paras:
            k = key(p)
            if len(k.split()) < 4 and p is not paras[0]:
                continue
            if k in owner:
                parent[find(m)] = find(owner[k])
            else:
                owner[k] = m
    return {m: find(m) for m in english}


def main():
    src, out = sys.argv[1], sys.argv[2]
    n = int(sys.argv[3]) if len(sys.argv) > 3 else 600
    m = int(sys.argv[4]) if len(sys.argv) > 4 else 3000
    rnd = random.Random(int(sys.argv[5]) if len(sys.argv) > 5 else 7)
    english = {}
    for pkg, md5, lines in records(os.path.join(src, "Translation-en.xz")):
        english.setdefault(md5, text_of(lines))
    fam = families(english)
    used = set()  # families in the set
    test, dev, truth = [], [], []
    for li, lang in enumerate(LANGS):
        pool = []
        for pkg, md5, lines in records(os.path.join(src, f"Translation-{lang}.bz2")):
            if md5 in english and len(" ".join(english[md5]).split()) >= 12:
                pool.append((pkg, md5, "\n".join(text_of(lines))))
        pool.sort()
        rnd.shuffle(pool)
        held = negatives = 0
        for pkg, md5, tr in pool:
            f = fam[md5]
            if f in used:
                continue
            en = "\n".join(english[md5])
            if held < n // len(LANGS):
                i = len(test)
                test.append({"id": f"t{i}", "text": en, "lang": lang, "package": pkg})
                if i % 2 == 0:
                    dev.append({"id": f"p{i}", "text": tr, "lang": lang, "package": pkg, "planted": f"t{i}"})
                    truth.append({"test": f"t{i}", "dev": f"p{i}"})
                held += 1
            elif negatives < m // len(LANGS):
                dev.append({"id": f"n{lang}{negatives}", "text": tr, "lang": lang, "package": pkg, "english": en})
                negatives += 1
            else:
                break
            used.add(f)
    rnd.shuffle(dev)
    os.makedirs(out, exist_ok=True)
    for name, rows in (("test", test), ("dev", dev), ("truth", truth)):
        with open(os.path.join(out, f"{name}.jsonl"), "w", encoding="utf-8") as f:
            for r in rows:
                f.write(json.dumps(r, ensure_ascii=False) + "\n")
    words = sorted(len(r["text"].split()) for r in test)
    print(f"{len(test)} held-out English descriptions (median {words[len(words) // 2]} words), {len(truth)} "
          f"planted; dev {len(dev)} translations ({len(dev) - len(truth)} unrelated) in {', '.join(LANGS)} -> {out}")


if __name__ == "__main__":
    main()
