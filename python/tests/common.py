"""What the pytest files share: the bundled GSM8K example (examples/gsm8k, MIT), the program the
package installs (or LEAKAUDIT_CLI), and reading its files back."""

import json
import os

import leakaudit

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
DEV = os.path.join(ROOT, "examples", "gsm8k", "dev.jsonl")
TEST = os.path.join(ROOT, "examples", "gsm8k", "test.jsonl")


def cli_path():
    here = os.path.join(os.path.dirname(leakaudit.__file__), "bin", "leakaudit")
    return os.environ.get("LEAKAUDIT_CLI", here)


def rows(path):
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f]


def read(folder, name):
    with open(os.path.join(folder, name), encoding="utf-8") as f:
        return f.read()
