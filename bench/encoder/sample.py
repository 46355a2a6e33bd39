#!/usr/bin/env python3
"""Write the fidelity sample: N sentences, one per line (newlines inside a text become spaces).

Half GSM8K test questions, half STS-B sentences (first N/2 distinct of each, in file order).
usage: sample.py DATA_DIR OUT.txt [N=1000]
"""
import json
import sys

data, out = sys.argv[1], sys.argv[2]
n = int(sys.argv[3]) if len(sys.argv) > 3 else 1000
texts, seen = [], set()


def add(t, limit):
    t = " ".join(t.split())
    if t and t not in seen and len(texts) < limit:
        seen.add(t)
        texts.append(t)


with open(f"{data}/gsm8k/test.jsonl", encoding="utf-8") as f:
    for line in f:
        add(json.loads(line)["question"], n // 2)
with open(f"{data}/stsb/original/sts-test.tsv", encoding="utf-8") as f:
    for line in f:
        cols = line.rstrip("\n").split("\t")
        if len(cols) >= 7:
            add(cols[5], n)
            add(cols[6], n)
with open(out, "w", encoding="utf-8") as f:
    for t in texts:
        f.write(t + "\n")
print(f"{len(texts)} sentences -> {out}")
