#!/usr/bin/env python3
"""Benchmark sets for link grades, built from real data with the negatives that fool similarity.

  gsm8k_planted: GSM8K test questions held out; seen = all of GSM8K train (same-style hard
      negatives, many from shared templates) plus edited copies of 420 test questions (word
      substitutions, insertions, deletions and swaps at 0-50 %, replacement words drawn from the
      corpus) and 100 test questions quoted inside passages of 3-7 other train questions.
  templated: template families with varying slots: "Statement 1 | ... Statement 2 | ..." items and
      "Question: ... A. B. C. D." items whose slots are STS-B sentences, code stubs with one
      docstring frame, and six arithmetic frames with names, items and numbers as slots; 1,400
      held-out instances, 3,000 sibling instances and 3,000 GSM8K train questions on the seen side,
      plus edited copies (560) and quotes (120) of held-out instances.
  site_policy: every revision of 57 policy documents, family ids hidden, revisions dated before
      2022-01-01 seen and the rest held out; the truth lists each revision's family (revisions of
      one policy should be linked across the cutoff, other policies share boilerplate and author).
  licenses: the distinct copyright files under /usr/share/doc (when present; 200 bytes to 1 MB),
      a seeded 80/20 split; different packages whose files share license text, the boilerplate
      case: no link between them is the item. Which files there are depends on the machine.

Writes DIR/NAME_{dev,test,truth}.jsonl. Usage: make_sets.py SHARED_DATA_DIR OUT_DIR (seeded; the
same inputs give the same files).
"""
import csv, json, os, random, sys

data, out = sys.argv[1], sys.argv[2]
os.makedirs(out, exist_ok=True)
train = [json.loads(l)["question"] for l in open(f"{data}/gsm8k/train.jsonl")]
test = [json.loads(l)["question"] for l in open(f"{data}/gsm8k/test.jsonl")]
vocab = [w for q in train for w in q.split()]
RATES = [0, 2, 5, 10, 20, 30, 50]


def edit(rng, words, rate):
    """round(rate * n) operations, each a substitution, insertion, deletion or neighbour swap."""
    w = list(words)
    for _ in range(int(round(rate / 100 * len(words)))):
        k = rng.randrange(4)
        if len(w) < 3:
            k = 1
        at = rng.randrange(len(w))
        if k == 0:
            w[at] = rng.choice(vocab)
        elif k == 1:
            w.insert(at, rng.choice(vocab))
        elif k == 2:
            del w[at]
        else:
            at = min(at, len(w) - 2)
            w[at], w[at + 1] = w[at + 1], w[at]
    return w


def quote(rng, text):
    host = " ".join(rng.sample(train, rng.randrange(3, 8))).split()
    at = rng.randrange(len(host) + 1)
    return " ".join(host[:at] + text.split() + host[at:])


def write(name, dev, held, truth):
    for part, rows in (("dev", dev), ("test", held), ("truth", truth)):
        with open(f"{out}/{name}_{part}.jsonl", "w") as f:
            for r in rows:
                f.write(json.dumps(r) + "\n")


def gsm8k_planted():
    rng = random.Random(7)
    idx = list(range(len(test)))
    rng.shuffle(idx)
    dev = [{"id": f"train{i}", "text": q} for i, q in enumerate(train)]
    truth = []
    for k, j in enumerate(idx[:420]):
        r = RATES[k % 7]
        dev.append({"id": f"edit{j}_{r}", "text": " ".join(edit(rng, test[j].split(), r))})
        truth.append({"dev": dev[-1]["id"], "test": f"test{j}", "case": f"edit{r}"})
    for j in idx[420:520]:
        dev.append({"id": f"quote{j}", "text": quote(rng, test[j])})
        truth.append({"dev": dev[-1]["id"], "test": f"test{j}", "case": "quote"})
    rng.shuffle(dev)
    write("gsm8k_planted", dev, [{"id": f"test{j}", "text": q} for j, q in enumerate(test)], truth)


NAMES = ("Aaron Abby Adam Aiden Alan Alice Amir Amy Ana Andre Anita Arjun Asha Beth Bianca Bruno Caleb Carmen Chloe "
         "Chris Dana Daniel Diego Dina Eli Emma Eric Ethan Eva Felix Fiona Gabe Gina Hana Hassan Helen Ian Iris Ivan "
         "Jack Jade Jake Jana Jay Jin Joel Julia Kai Kara Karl Kim Kyle Lara Leo Lily Lucas Luis Maya Mia Mike Mina "
         "Nadia Nate Nick Noah Nora Olga Oscar Paul Pedro Raj Ravi Rita Ryan Sara Sean Sofia Tom Tony Uma Victor Will "
         "Yara Yuki Zack Ava Ben Carla Dev Elena Farid Grace Hiro Ines Jamal Kofi Lena Mateo Nia Omar Priya Quinn Rosa "
         "Sami Tara Umar Vera Wen Xena Yusuf Zoe").split()
ITEMS = ("apples pencils stickers marbles cookies books stamps shells coins cards balloons muffins bottles candles "
         "cupcakes donuts eggs feathers flowers grapes hats jars keys lemons magnets notebooks oranges pebbles pies "
         "rings ribbons rocks socks spoons tickets toys tulips wagons").split()
MATH = [
    "{A} has {n1} {it}. {A} buys {n2} more {it} and gives {n3} to {B}. How many {it} does {A} have now?",
    "{A} sells {it} at the market for ${n1} each. On Monday {A} sells {n2} {it} and on Tuesday {n3} more. How much money does {A} earn in total?",
    "A box holds {n1} {it}. {A} fills {n2} boxes and {B} fills {n3} boxes. How many {it} do they pack altogether?",
    "{A} reads {n1} pages a day. After {n2} days {A} still has {n3} pages left. How many pages does the book have?",
    "There are {n1} {it} in a jar. {A} takes {n2} of them and {B} takes twice as many as {A}. How many {it} are left in the jar?",
    "{A} runs {n1} miles every morning and {n2} miles every evening. How many miles does {A} run in {n3} days?",
]
FAMILIES = ["stmt", "code", "mc"] + [f"math{i}" for i in range(len(MATH))]


def templated():
    rng = random.Random(11)
    rows = csv.reader(open(f"{data}/stsb/original/sts-train.tsv"), delimiter="\t", quoting=csv.QUOTE_NONE)
    sents = [r[6] for r in rows if len(r) > 6]
    sents = list(dict.fromkeys(s for s in sents if 6 <= len(s.split()) <= 30))
    rng.shuffle(sents)
    it = iter(sents)

    def num():
        return str(int(round(2 * 10 ** rng.uniform(0, 3))))

    def instance(fam):
        if fam == "stmt":
            return f"Statement 1 | {next(it)} Statement 2 | {next(it)}"
        if fam == "code":
            s = next(it)
            fn = "_".join(x.strip(".,").lower() for x in s.split()[:3])
            return f'def {fn}(x):\n    """ {s}\n    >>> {fn}({num()})\n    {num()}\n    """'
        if fam == "mc":
            return (f"Question: {next(it)}\nA. {rng.choice(vocab)}\nB. {rng.choice(vocab)}\nC. {rng.choice(vocab)}\n"
                    f"D. {rng.choice(vocab)}\nAnswer:")
        a, b = rng.sample(NAMES, 2)
        return MATH[int(fam[4:])].format(A=a, B=b, it=rng.choice(ITEMS), n1=num(), n2=num(), n3=num())

    held = [{"id": f"t{i}", "text": instance(FAMILIES[i % len(FAMILIES)])} for i in range(1400)]
    dev = [{"id": f"s{i}", "text": instance(FAMILIES[i % len(FAMILIES)])} for i in range(3000)]
    truth = []
    for k, i in enumerate(rng.sample(range(1400), 560)):
        r = RATES[k % 7]
        dev.append({"id": f"e{i}_{r}", "text": " ".join(edit(rng, held[i]["text"].split(), r))})
        truth.append({"dev": dev[-1]["id"], "test": f"t{i}", "case": f"edit{r}"})
    for i in rng.sample(range(1400), 120):
        dev.append({"id": f"q{i}", "text": quote(rng, held[i]["text"])})
        truth.append({"dev": dev[-1]["id"], "test": f"t{i}", "case": "quote"})
    dev += [{"id": f"g{i}", "text": q} for i, q in enumerate(train[:3000])]
    rng.shuffle(dev)
    write("templated", dev, held, truth)


def site_policy():
    rows = [json.loads(l) for l in open(f"{data}/site-policy/policy_versions.jsonl")]
    dev, held, truth = [], [], []
    for r in rows:
        rid = f"{r['family']}@{r['version_idx']}"
        (dev if r["date"][:10] < "2022-01-01" else held).append({"id": rid, "text": r["text"]})
        truth.append({"id": rid, "family": r["family"]})
    write("site_policy", dev, held, truth)


def licenses():
    import glob, hashlib
    seen, rows = set(), []
    for path in sorted(glob.glob("/usr/share/doc/*/copyright")):
        try:
            text = open(path, encoding="utf-8", errors="replace").read()
        except OSError:
            continue
        digest = hashlib.sha1(text.encode()).hexdigest()
        if digest in seen or not 200 <= len(text.encode()) <= 1 << 20:
            continue
        seen.add(digest)
        rows.append({"id": path.split("/")[-2], "text": text})
    if not rows:
        return
    random.Random(11).shuffle(rows)
    n = len(rows) // 5
    write("licenses", rows[n:], rows[:n], [])


gsm8k_planted()
templated()
site_policy()
licenses()
