#!/usr/bin/env python3
"""Regenerate tests/data/encoder/unigram_tokenizer.json and unigram_golden.jsonl: a small
SentencePiece unigram tokenizer trained with the reference `tokenizers` package on GSM8K train
questions plus a few Vietnamese, Chinese and accented lines (NFKC + a literal Replace normalizer,
WhitespaceSplit + Metaspace pre-tokenizer), and its ids for hard cases and GSM8K test questions.
usage: make_unigram_fixture.py DATA_DIR OUT_DIR
"""
import json
import os
import sys

from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, trainers

data, out = sys.argv[1], sys.argv[2]
texts = [json.loads(line)["question"] for line in open(f"{data}/gsm8k/train.jsonl", encoding="utf-8")][:3000]
texts += ["Việt Nam là một quốc gia ở Đông Nam Á.", "中文分词测试：我们去北京。", "Tiếng Việt có dấu",
          "café naïve résumé"] * 20
tok = Tokenizer(models.Unigram())
tok.normalizer = normalizers.Sequence([normalizers.NFKC(), normalizers.Replace("``", '"')])
tok.pre_tokenizer = pre_tokenizers.Sequence([pre_tokenizers.WhitespaceSplit(), pre_tokenizers.Metaspace()])
tok.train_from_iterator(texts, trainers.UnigramTrainer(vocab_size=800, special_tokens=["<s>", "<pad>", "</s>", "<unk>"],
                                                        unk_token="<unk>"))
tok.save(os.path.join(out, "unigram_tokenizer.json"))
hard = ["Hello world, Việt Nam! 中文 xyzzy ŋ", "", "   ", "  leading and   inner   spaces  ", "tabs\tand\nlines",
        "ﬁve ｆｕｌｌ ｗｉｄｔｈ ①②", "``quoted''", "ŋŋŋ unknown ŋ run", "emoji 😀😀 end", "Tiếng Việt có dấu: ắ ằ ẳ",
        "e\u0301 combining", "▁already▁marked", "12,345.67 + 8 = ?", "中文分词测试：我们去北京。"]
test = [json.loads(line)["question"] for line in open(f"{data}/gsm8k/test.jsonl", encoding="utf-8")][:60]
with open(os.path.join(out, "unigram_golden.jsonl"), "w", encoding="utf-8") as f:
    for t in hard + test:
        f.write(json.dumps({"text": t, "ids": tok.encode(t, add_special_tokens=False).ids}, ensure_ascii=False) + "\n")
print(f"{len(hard) + len(test)} golden tokenizations -> {out}")
