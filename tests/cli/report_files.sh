#!/usr/bin/env bash
# report.html is one self-contained, well-formed page whose data holds both texts of every link, and
# no text can close its script element or open a comment there;
# report.junit.xml is valid JUnit with a failing test case exactly for each gated kind that was found.
source "$(dirname "$0")/lib.bash"

cat >dev.jsonl <<'J'
{"id":"d1","text":"What is 2 <b>plus</b> 2 & why?","family":"f1"}
{"id":"d2","text":"Unrelated row about weather."}
{"id":"d3","text":"Ends early </script><script>alert(1)</script> <!-- and a comment"}
J
cat >test.jsonl <<'J'
{"id":"t1","text":"what is 2 <B>PLUS</B> 2 & why?"}
{"id":"t2","text":"Shares a family only.","family":"f1"}
{"id":"t3","text":"ends early </SCRIPT><script>alert(1)</script> <!-- and a comment"}
J

check "report.html: well formed, nothing fetched, the texts in its data and nowhere else"
la audit --dev dev.jsonl --test test.jsonl --near off --embed none --out out
expect_rc 1
python3 - out/report.html out/pairs.jsonl <<'PY' || fail "report.html is not as expected"
import html.parser, json, sys
page = open(sys.argv[1], encoding="utf-8").read()
assert page.startswith("<!DOCTYPE html>") and "</html>" in page
assert "http://" not in page and "https://" not in page and "src=" not in page and "@import" not in page
start = page.index('<script type="application/json" id="la-data">') + len('<script type="application/json" id="la-data">')
end = page.index("</script>", start)
blob = page[start:end]
assert "<" not in blob and ">" not in blob and "&" not in blob, "the data holds a byte that HTML reads"
data = json.loads(blob)
texts = set(data["rows"]["text"])
assert "What is 2 <b>plus</b> 2 & why?" in texts and "what is 2 <B>PLUS</B> 2 & why?" in texts, texts
assert "Ends early </script><script>alert(1)</script> <!-- and a comment" in texts, texts
assert len(data["links"]["a"]) == sum(1 for _ in open(sys.argv[2])), "every link of pairs.jsonl"
assert page.count("<script") == 2 and page.count("</script>") == 2, "only the data and the page's own script"
own = page[page.index("<script>", end) + 8:page.rindex("</script>")].lower()
assert "<!--" not in own and "<script" not in own and "</script" not in own, "the page's script changes how HTML reads it"
assert "<b>plus</b>" not in page and "alert(1)" not in page.replace(blob, "")
assert "Leaks found" in page and "too small to gate a release" in page
class P(html.parser.HTMLParser):
    void = {"br", "meta", "line", "rect", "path", "col", "input"}
    def __init__(s):
        super().__init__(); s.stack = []; s.bad = 0
    def handle_starttag(s, t, a):
        if t not in s.void: s.stack.append(t)
    def handle_endtag(s, t):
        if t in s.void: return
        if s.stack and s.stack[-1] == t: s.stack.pop()
        else: s.bad += 1
p = P(); p.feed(page)
assert p.bad == 0 and p.stack == [], (p.bad, p.stack)
PY

check "report.junit.xml: failures for exact and family, skipped for the kinds --fail-on leaves out"
python3 - out/report.junit.xml <<'PY' || fail "report.junit.xml is not as expected"
import sys, xml.etree.ElementTree as ET
s = ET.parse(sys.argv[1]).getroot()
assert s.tag == "testsuite" and s.get("tests") == "5" and s.get("failures") == "2", s.attrib
failed = {c.get("classname") for c in s if c.find("failure") is not None}
assert failed == {"leakaudit.exact", "leakaudit.family"}, failed
PY
la audit --dev dev.jsonl --test test.jsonl --near off --embed none --fail-on exact --out gated
python3 - gated/report.junit.xml <<'PY' || fail "gated junit is not as expected"
import sys, xml.etree.ElementTree as ET
s = ET.parse(sys.argv[1]).getroot()
assert s.get("failures") == "1" and s.get("skipped") == "4", s.attrib
PY

check "report.junit.xml stays well formed with ids holding characters XML 1.0 does not allow"
printf '%s\n' '{"id":"d\ufffe1","text":"copied question one"}' '{"id":"d\uffff2","text":"copied question two"}' \
    '{"id":"d\u00013","text":"copied question three"}' >xdev.jsonl
printf '%s\n' '{"id":"t<&>\"1","text":"copied question one"}' '{"id":"t\ud83d\ude002","text":"copied question two"}' \
    '{"id":"t3","text":"copied question three"}' >xtest.jsonl
la audit --dev xdev.jsonl --test xtest.jsonl --near off --embed none --out xml
expect_rc 1
python3 - xml/report.junit.xml <<'PY' || fail "report.junit.xml is not well formed or lost the ids"
import sys, xml.etree.ElementTree as ET
s = ET.parse(sys.argv[1]).getroot()
text = "".join(c.find("failure").text for c in s if c.get("classname") == "leakaudit.exact")
assert "d\ufffd1 ~ t<&>\"1" in text, text
assert "d\ufffd2 ~ t\U0001F6002" in text, text
assert "d 3 ~ t3" in text, text
PY

check "rows with no text after normalization are counted and named in report.md"
printf '%s\n' '{"id":"e1","text":"   "}' '{"id":"e2","text":""}' >blank_dev.jsonl
printf '%s\n' '{"id":"e3","text":"\t"}' >blank_test.jsonl
la audit --dev blank_dev.jsonl --test blank_test.jsonl --out blank
expect_rc 0
[ "$(json_get blank/report.json 'j["counts"]["rows_without_text"]')" = 3 ] || fail "rows_without_text"
expect_has blank/report.md "3 rows have no text after normalization"

pass
