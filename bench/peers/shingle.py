"""The near-copy benchmark's shingles for the Python peers: distinct word bigrams under leakaudit's
token rule (runs of ASCII letters, digits and non-ASCII bytes); a text of one word is that word."""
import re

WORD = re.compile(rb"[0-9A-Za-z\x80-\xff]+")


def shingles(text, n=2):
    w = WORD.findall(text.encode())
    if not w:
        return []
    if len(w) < n:
        return [b" ".join(w).decode()]
    return sorted({b" ".join(w[i:i + n]).decode() for i in range(len(w) - n + 1)})
