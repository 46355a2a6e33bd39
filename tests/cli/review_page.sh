#!/usr/bin/env bash
# report.html as a reviewer uses it, in headless Chromium (tests/browser/check_page.py): the page
# loads without a script error and lists every link; the kind, grade, partition and text filters
# give pairs.jsonl's counts; a pair opens side by side with its shared and differing words marked
# and a related link's template frame apart; a cluster opens with its members per partition; a
# screenshot is taken (kept beside the test's folder as review_page-*.png). On the GSM8K example
# and on a generated audit with 10,100 links. Skipped (77) where no Chromium is installed.
source "$(dirname "$0")/lib.bash"
command -v chromium >/dev/null || command -v chromium-browser >/dev/null || command -v google-chrome >/dev/null || {
    echo "no chromium: skipped"; exit 77; }
shots=$(dirname "$WORK")

check "the GSM8K example's report (300 test, 1,007 dev questions)"
la audit --dev "$SRC/examples/gsm8k/dev.jsonl" --test "$SRC/examples/gsm8k/test.jsonl" --text-field question \
    --cutoff 2026-01-01 --embed lexical --out gsm8k
expect_rc 1
python3 "$SRC/tests/browser/check_page.py" gsm8k "$shots/review_page-gsm8k.png" || fail "the GSM8K page"

check "a generated audit with about 10,000 links"
python3 "$SRC/tests/browser/make_links.py" 10000 gen >/dev/null
la audit --dev gen/dev.jsonl --test gen/test.jsonl --embed lexical --out big
expect_rc 1
[ "$(wc -l <big/pairs.jsonl)" -ge 10000 ] || fail "expected at least 10,000 links, got $(wc -l <big/pairs.jsonl)"
python3 "$SRC/tests/browser/check_page.py" big "$shots/review_page-10k.png" || fail "the 10k-link page"
pass
