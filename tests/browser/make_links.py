#!/usr/bin/env python3
"""make_links.py - a seeded dev/test pair whose audit has about LINKS links across the boundary, of
every kind the review page shows: template siblings (related), exact and edited copies (copy,
near), rewordings, and shared family ids. The words are made up; same arguments, same files.

Usage: make_links.py LINKS OUT_DIR   (writes OUT_DIR/dev.jsonl and OUT_DIR/test.jsonl)

Per template, D dev and H held-out instances share a 25-word frame and differ in four slots (a
name, two numbers, an object), so the near tier links every dev x held-out sibling: D*H links.
"""
import json
import os
import random
import sys

links, out = int(sys.argv[1]), sys.argv[2]
rng = random.Random(15)
syll = ["ka", "lo", "mi", "ren", "tus", "va", "dor", "pe", "sil", "un", "bra", "qui", "zel", "fo", "mar", "ti"]


def word():
    return "".join(rng.choice(syll) for _ in range(rng.randint(2, 3)))


vocab = sorted({word() for _ in range(4000)})
names = ["Ada", "Bela", "Cyrus", "Dana", "Emil", "Farah", "Goran", "Hana", "Ivo", "Jun", "Kira", "Lev", "Mara",
         "Niko", "Omar", "Pia", "Quin", "Rosa", "Sami", "Tova"]
objects = ["apples", "books", "coins", "stamps", "marbles", "shells", "cards", "pens", "tiles", "beads"]

D, H = 20, 10                       # siblings per template on each side
ntemplates = max(1, links // (D * H))
dev, test = [], []


def instance(frame):
    words = list(frame)
    words[3] = rng.choice(names)
    words[9] = str(rng.randint(2, 99))
    words[15] = rng.choice(objects)
    words[21] = str(rng.randint(100, 999))
    return " ".join(words) + "?"


for t in range(ntemplates):
    frame = [rng.choice(vocab) for _ in range(25)]
    for k in range(D):
        dev.append({"id": "dev-%05d-%02d" % (t, k), "text": instance(frame)})
    for k in range(H):
        test.append({"id": "test-%05d-%02d" % (t, k), "text": instance(frame)})

# copies: exact, a few words edited, and a long passage that quotes a held-out item
for k in range(max(10, links // 100)):
    text = " ".join(rng.choice(vocab) for _ in range(rng.randint(30, 60))) + "."
    dev.append({"id": "dev-copy-%05d" % k, "text": text})
    words = text.split()
    if k % 3 == 1:
        for _ in range(2):
            words[rng.randrange(len(words))] = rng.choice(vocab)
    elif k % 3 == 2:
        words = words[5:]
    test.append({"id": "test-copy-%05d" % k, "text": " ".join(words), "family": "fam-%05d" % k if k % 7 == 0 else None})
    if k % 7 == 0:
        dev[-1]["family"] = "fam-%05d" % k
# unrelated held-out rows
for k in range(max(10, links // 50)):
    test.append({"id": "test-alone-%05d" % k, "text": " ".join(rng.choice(vocab) for _ in range(40)) + "."})

os.makedirs(out, exist_ok=True)
for name, rows in (("dev", dev), ("test", test)):
    with open(os.path.join(out, name + ".jsonl"), "w") as f:
        for r in rows:
            f.write(json.dumps({k: v for k, v in r.items() if v is not None}) + "\n")
print("%d dev rows, %d test rows, %d templates" % (len(dev), len(test), ntemplates))
