#!/usr/bin/env python3
"""Write the calibration texts as .txt files (one text per line, newlines inside a text turned
into spaces) under the names bench_semantic quality reads: gsm8k_test, gsm8k_train,
gsm8k_rephrase, gsm8k_rephrase_q (the question part of each rephrase) and stsb_{split}_s{1,2},
exactly the texts bench/semantic/embed_minilm.py embeds.
usage: texts.py DATA_DIR OUT_DIR
"""
import json
import os
import sys

data, out = sys.argv[1], sys.argv[2]
os.makedirs(out, exist_ok=True)


def jsonl_field(path, field):
    with open(path, encoding="utf-8") as f:
        return [json.loads(line).get(field) or "" for line in f if line.strip()]


def question_part(text):
    if text.startswith("Question:"):
        text = text[len("Question:"):]
    cut = text.find("\nAnswer:")
    if cut >= 0:
        text = text[:cut]
    return text.strip(" \t\n\r")


jobs = {
    "gsm8k_test": jsonl_field(f"{data}/gsm8k/test.jsonl", "question"),
    "gsm8k_train": jsonl_field(f"{data}/gsm8k/train.jsonl", "question"),
    "gsm8k_rephrase": jsonl_field(f"{data}/gsm8k/rephrase_test.jsonl", "text"),
}
jobs["gsm8k_rephrase_q"] = [question_part(t) for t in jobs["gsm8k_rephrase"]]
for split in ("train", "dev", "test"):
    s1, s2 = [], []
    with open(f"{data}/stsb/original/sts-{split}.tsv", encoding="utf-8") as f:
        for line in f:
            cols = line.rstrip("\n").split("\t")
            if len(cols) >= 7:
                s1.append(cols[5])
                s2.append(cols[6])
    jobs[f"stsb_{split}_s1"], jobs[f"stsb_{split}_s2"] = s1, s2
for name, texts in jobs.items():
    with open(f"{out}/{name}.txt", "w", encoding="utf-8") as f:
        for t in texts:
            f.write(" ".join(t.replace("\r", " ").split("\n")) + "\n")
    print(name, len(texts))
