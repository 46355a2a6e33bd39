#!/usr/bin/env python3
"""Write the calibration texts as .txt files (one text per line, newlines inside a text turned
into spaces) under the names bench_semantic quality reads: gsm8k_test, gsm8k_train,
gsm8k_rephrase, gsm8k_rephrase_q (the question part of each rephrase) and stsb_{split}_s{1,2},
exactly the texts bench/semantic/embed_minilm.py embeds.
usage: texts.py DATA_DIR OUT_DIR
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "semantic"))
from calib_texts import calibration_texts  # noqa: E402

data, out = sys.argv[1], sys.argv[2]
os.makedirs(out, exist_ok=True)
jobs = calibration_texts(data)
for name, texts in jobs.items():
    with open(f"{out}/{name}.txt", "w", encoding="utf-8") as f:
        for t in texts:
            f.write(" ".join(t.replace("\r", " ").split("\n")) + "\n")
    print(name, len(texts))
