#!/usr/bin/env python3
"""Reference vectors and tokenizations from sentence-transformers (PyTorch) for a text file.

Reads one text per line; writes OUT.npy (float32, unit rows, model.encode with normalize) and
OUT.tokens (the reference tokenizer's ids per line, space-separated, [CLS]/[SEP] included, truncated
as the model truncates). Loads the model from a folder; nothing is fetched (HF_HUB_OFFLINE=1).
usage: reference.py MODEL_DIR TEXTS.txt OUT [BATCH=32]
"""
import os
import sys
import time

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

import numpy as np  # noqa: E402
from sentence_transformers import SentenceTransformer  # noqa: E402

model_dir, src, out = sys.argv[1], sys.argv[2], sys.argv[3]
batch = int(sys.argv[4]) if len(sys.argv) > 4 else 32
with open(src, encoding="utf-8") as f:
    texts = [line.rstrip("\n") for line in f]
model = SentenceTransformer(model_dir, device="cpu")
t0 = time.perf_counter()
vec = model.encode(texts, batch_size=batch, normalize_embeddings=True, convert_to_numpy=True)
dt = time.perf_counter() - t0
np.save(out + ".npy", vec.astype(np.float32))
tok = model.tokenizer
with open(out + ".tokens", "w", encoding="utf-8") as f:
    for t in texts:
        ids = tok(t, truncation=True, max_length=model.max_seq_length)["input_ids"]
        f.write(" ".join(map(str, ids)) + "\n")
print(f"reference: {len(texts)} texts in {dt:.2f} s ({len(texts) / dt:.1f} sentences/s, batch {batch})")
