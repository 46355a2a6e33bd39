#!/usr/bin/env python3
"""Regenerate the encoder test fixtures in tests/data/encoder/ with the reference packages.

  wordpiece_golden.jsonl  {"text", "ids"}: the reference `tokenizers` WordPiece ids (no [CLS]/[SEP],
                          no truncation) of hand-picked hard cases and sample sentences
  minilm_ref.txt/.npy     texts and their sentence-transformers all-MiniLM-L6-v2 vectors (float32)

usage: make_fixtures.py MODEL_DIR SAMPLE.txt OUT_DIR
"""
import json
import os
import sys

os.environ.setdefault("HF_HUB_OFFLINE", "1")
import numpy as np  # noqa: E402
from sentence_transformers import SentenceTransformer  # noqa: E402
from tokenizers import Tokenizer  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from hard_cases import HARD  # noqa: E402

model_dir, sample, out = sys.argv[1], sys.argv[2], sys.argv[3]
hard = HARD
with open(sample, encoding="utf-8") as f:
    texts = [line.rstrip("\n") for line in f]
tok = Tokenizer.from_file(os.path.join(model_dir, "tokenizer.json"))
tok.no_truncation()
tok.no_padding()
with open(os.path.join(out, "wordpiece_golden.jsonl"), "w", encoding="utf-8") as f:
    for t in hard + texts[:200:4] + texts[500:700:4]:
        ids = tok.encode(t, add_special_tokens=False).ids
        f.write(json.dumps({"text": t, "ids": ids}, ensure_ascii=False) + "\n")
# vectors: sample sentences, hard cases with text, and one text past the 256-token window
long_text = " ".join(texts[:12])
vec_texts = texts[:16] + texts[500:516] + [h for h in hard[:20] if h.strip()] + [long_text]
vec_texts = [t.replace("\n", " ").replace("\r", " ") for t in vec_texts]
model = SentenceTransformer(model_dir, device="cpu")
v = model.encode(vec_texts, batch_size=16, normalize_embeddings=True, convert_to_numpy=True)
with open(os.path.join(out, "minilm_ref.txt"), "w", encoding="utf-8") as f:
    for t in vec_texts:
        f.write(t + "\n")
np.save(os.path.join(out, "minilm_ref.npy"), v.astype(np.float32))
print(f"{len(hard) + 100} tokenizations, {len(vec_texts)} vectors -> {out}")
