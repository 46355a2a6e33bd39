#!/usr/bin/env python3
"""GSM8K rephrase-leak sets, for bench/encoder/gsm8k_audit.sh and bench/grades/digits.sh.

  test.jsonl       held out: every test question (ids t0..t1318)
  rephrased.jsonl  the question part of the rephrase of every even-numbered test question (line i
                   of rephrase_test.jsonl rewords line i of test.jsonl; ids r0, r2, ...)
  train.jsonl      every train question (ids train0..): same style and templates, the hard negatives
  dev.jsonl        rephrased.jsonl then train.jsonl

usage: gsm8k_sets.py SHARED_DATA_DIR OUT_DIR
"""
import json
import os
import sys


def rows(path):
    return [json.loads(line) for line in open(path, encoding="utf-8") if line.strip()]


def question_part(text):
    """The question of a stored rephrase ("Question: ... Answer: ...")."""
    text = text[len("Question:"):] if text.startswith("Question:") else text
    cut = text.find("\nAnswer:")
    return (text[:cut] if cut >= 0 else text).strip(" \t\n\r")


def write(path, records):
    with open(path, "w", encoding="utf-8") as f:
        f.write("".join(json.dumps(r) + "\n" for r in records))


def main():
    data, out = sys.argv[1], sys.argv[2]
    os.makedirs(out, exist_ok=True)
    test, reph, train = (rows(f"{data}/gsm8k/{n}.jsonl") for n in ("test", "rephrase_test", "train"))
    held = [{"id": f"t{i}", "text": r["question"]} for i, r in enumerate(test)]
    rephrased = [{"id": f"r{i}", "text": question_part(r["text"])} for i, r in enumerate(reph) if i % 2 == 0]
    seen = [{"id": f"train{j}", "text": r["question"]} for j, r in enumerate(train)]
    write(f"{out}/test.jsonl", held)
    write(f"{out}/rephrased.jsonl", rephrased)
    write(f"{out}/train.jsonl", seen)
    write(f"{out}/dev.jsonl", rephrased + seen)


if __name__ == "__main__":
    main()
