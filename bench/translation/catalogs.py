#!/usr/bin/env python3
"""English messages and their human translations from the message catalogues Debian packages install
(/usr/share/locale/LANG/LC_MESSAGES/*.mo), decompiled with msgunfmt (package gettext).

catalog_pairs(lang) -> [(catalogue, msgid, msgstr)]: singular messages only (no plural forms, no
context-only duplicates), not fuzzy, translated (msgstr non-empty and not equal to msgid), the
English side a sentence-like message: at least 4 words and at most 400 characters, not a bare
option list or a key binding. Messages are deduplicated per catalogue by their English text.
"""
import glob
import os
import re
import subprocess

LOCALE = "/usr/share/locale"


def _unquote(s):
    s = s.strip()
    assert s.startswith('"') and s.endswith('"'), s
    body = s[1:-1]
    out, i = [], 0
    esc = {"n": "\n", "t": "\t", '"': '"', "\\": "\\", "r": "\r", "a": "\a", "b": "\b", "f": "\f", "v": "\v"}
    while i < len(body):
        c = body[i]
        if c == "\\" and i + 1 < len(body):
            n = body[i + 1]
            if n in esc:
                out.append(esc[n])
                i += 2
                continue
            m = re.match(r"[0-7]{1,3}", body[i + 1:])
            if m:
                out.append(chr(int(m.group(0), 8)))
                i += 1 + len(m.group(0))
                continue
        out.append(c)
        i += 1
    return "".join(out)


def _parse_po(text):
    """Entries of a decompiled catalogue: dicts with msgctxt, msgid, msgid_plural, msgstr, fuzzy."""
    entries, cur, key = [], {}, None
    for line in text.split("\n") + [""]:
        if not line.strip():
            if cur:
                entries.append(cur)
            cur, key = {}, None
            continue
        if line.startswith("#,") and "fuzzy" in line:
            cur["fuzzy"] = True
            continue
        if line.startswith("#"):
            continue
        m = re.match(r'^(msgctxt|msgid_plural|msgid|msgstr(?:\[\d+\])?)\s+(".*")$', line)
        if m:
            key = m.group(1)
            cur[key] = _unquote(m.group(2))
        elif line.startswith('"') and key:
            cur[key] += _unquote(line)
    return entries


def _sentence_like(s):
    words = re.findall(r"[A-Za-z]{2,}", s)
    return 4 <= len(s.split()) and len(words) >= 3 and len(s) <= 400 and not s.lstrip().startswith("-")


def catalog_pairs(lang):
    out = []
    for mo in sorted(glob.glob(f"{LOCALE}/{lang}/LC_MESSAGES/*.mo")):
        cat = os.path.basename(mo)[:-3]
        try:
            po = subprocess.run(["msgunfmt", mo], capture_output=True, text=True, check=True).stdout
        except (subprocess.CalledProcessError, UnicodeDecodeError):
            continue
        seen = set()
        for e in _parse_po(po):
            mid, mstr = e.get("msgid", ""), e.get("msgstr", "")
            if not mid or "msgid_plural" in e or e.get("fuzzy") or not mstr or mstr == mid:
                continue
            mid, mstr = mid.strip(), mstr.strip()
            if not _sentence_like(mid) or mid in seen:
                continue
            seen.add(mid)
            out.append((cat, mid, mstr))
    return out


if __name__ == "__main__":
    import sys
    for lang in sys.argv[1:] or ["zh_CN", "vi"]:
        p = catalog_pairs(lang)
        print(lang, len(p), "messages from", len({c for c, _, _ in p}), "catalogues")
