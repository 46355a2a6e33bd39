"""The calibration texts of the semantic benchmarks, by name: GSM8K test and train questions, the
rephrases and their question parts, and both sentences of each STS-B split. One definition for
embed_minilm.py (sentence-transformers vectors) and bench/encoder/texts.py (the same texts as .txt
files for the built-in encoder), so both embed exactly the same texts. Standard library only."""
import json


def jsonl_field(path, field):
    with open(path, encoding="utf-8") as f:
        return [json.loads(line).get(field) or "" for line in f if line.strip()]


def question_part(text):
    """The question of a rephrase stored as "Question: Q\nAnswer: ...": Q (same rule as bench_semantic.c)."""
    if text.startswith("Question:"):
        text = text[len("Question:"):]
    cut = text.find("\nAnswer:")
    if cut >= 0:
        text = text[:cut]
    return text.strip(" \t\n\r")


def stsb_pairs(path):
    s1, s2 = [], []
    with open(path, encoding="utf-8") as f:
        for line in f:
            cols = line.rstrip("\n").split("\t")
            if len(cols) >= 7:
                s1.append(cols[5])
                s2.append(cols[6])
    return s1, s2


def calibration_texts(data):
    """name -> list of texts, in the order the benchmarks read them."""
    jobs = {
        "gsm8k_test": jsonl_field(f"{data}/gsm8k/test.jsonl", "question"),
        "gsm8k_train": jsonl_field(f"{data}/gsm8k/train.jsonl", "question"),
        "gsm8k_rephrase": jsonl_field(f"{data}/gsm8k/rephrase_test.jsonl", "text"),
    }
    jobs["gsm8k_rephrase_q"] = [question_part(t) for t in jobs["gsm8k_rephrase"]]
    for split in ("train", "dev", "test"):
        jobs[f"stsb_{split}_s1"], jobs[f"stsb_{split}_s2"] = stsb_pairs(f"{data}/stsb/original/sts-{split}.tsv")
    return jobs
