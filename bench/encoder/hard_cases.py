#!/usr/bin/env python3
"""Hand-picked hard cases for the tokenizer fixtures (make_fixtures.py, make_e5_fixtures.py): case,
punctuation, accents, scripts with and without spaces, emoji, control and invisible characters,
compatibility forms, combining marks, long runs."""
HARD = [
    "Hello, World!", "HELLO world", "don't stop-believing...", "U.S.A. costs $3.50 (approx.)",
    "café naïve résumé Ångström façade", "Việt Nam là một quốc gia", "Tiếng Việt có dấu: ắ ằ ẳ ẵ ặ",
    "中文分词测试：我们去北京。", "日本語のテキストとカタカナ", "한국어 문장입니다", "Ελληνικά και Русский текст",
    "العربية نص", "emoji 😀 and ✨ sparkles", "tabs\tand\nnew\r\nlines", "non\u00a0breaking\u2003spaces",
    "zero\u200bwidth\u200djoiner", "control\u0001\u0007chars\u007f", "combining e\u0301 and a\u0308",
    "ﬁ ligature and ｆｕｌｌ ｗｉｄｔｈ", "#hashtag @mention ##double", "x" * 120, "supercalifragilisticexpialidocious",
    "unaffable unbelievably antidisestablishmentarianism", "3.14159 1,000,000 10^6 2+2=4",
    "Janet’s ducks lay 16 eggs — she sells them «fresh» at $2", "", "   ", "İstanbul ǅ ß ẞ",
    "a\u0000b\ufffdc", "Ⅻ ① ²", "naïve\u0300\u0301", "𠀀𠀁 extension-B ideographs", "‘quotes’ “double” „low“",
]
