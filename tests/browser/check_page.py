#!/usr/bin/env python3
"""check_page.py - loads a report.html in headless Chromium and checks what a reviewer does with it:
the page loads with no script error and lists every link of pairs.jsonl; the kind, grade, partition
and text filters give the counts pairs.jsonl gives; sorting by a score puts the highest first; a
pair opens side by side with shared spans and differing words marked (and its template frame for
a related link); a cluster opens with its members per partition; a screenshot is saved.

Usage: check_page.py REPORT_DIR SCREENSHOT.png [--time]
  --time   also print the load and filter times (for bench/review_page.sh; no limit is checked)
Exit 0 when every check holds, 1 with the failed check on stderr, 77 when no Chromium is found.

Talks to Chromium over --remote-debugging-pipe (the DevTools protocol as NUL-terminated JSON on
file descriptors 3 and 4), so it needs nothing beyond the Python standard library.
"""
import base64
import fcntl
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time


class Chromium:
    """One headless Chromium and one page, driven over the DevTools pipe."""

    def __init__(self, width=1400, height=1100):
        exe = next((shutil.which(n) for n in ("chromium", "chromium-browser", "google-chrome") if shutil.which(n)), None)
        if not exe:
            sys.exit(77)
        self.profile = tempfile.mkdtemp(prefix="la-chromium-")
        to_child_r, self.to_child = os.pipe()
        self.from_child, from_child_w = os.pipe()
        # the child reads commands on fd 3 and writes replies on fd 4; the pipes' own descriptors
        # close on exec (Python creates them so), and are moved above 9 first in case one is 3 or 4
        def fds():
            r = fcntl.fcntl(to_child_r, fcntl.F_DUPFD, 10)
            w = fcntl.fcntl(from_child_w, fcntl.F_DUPFD, 10)
            os.dup2(r, 3)
            os.dup2(w, 4)
        self.proc = subprocess.Popen(
            [exe, "--headless=new", "--remote-debugging-pipe", "--no-sandbox", "--disable-gpu",
             "--disable-dev-shm-usage", "--no-first-run", "--no-default-browser-check", "--disable-extensions",
             "--user-data-dir=" + self.profile, "--window-size=%d,%d" % (width, height), "about:blank"],
            preexec_fn=fds, close_fds=False, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL)
        os.close(to_child_r)
        os.close(from_child_w)
        self.buf = b""
        self.next_id = 0
        self.events = []
        self.session = None
        targets = self.call("Target.getTargets")["targetInfos"]
        page = next(t for t in targets if t["type"] == "page")
        self.session = self.call("Target.attachToTarget", targetId=page["targetId"], flatten=True)["sessionId"]
        self.call("Page.enable")
        self.call("Runtime.enable")
        self.call("Emulation.setDeviceMetricsOverride", width=width, height=height, deviceScaleFactor=1, mobile=False)

    def _read(self, deadline):
        while b"\0" not in self.buf:
            if time.time() > deadline:
                raise TimeoutError("no answer from Chromium")
            chunk = os.read(self.from_child, 1 << 20)
            if not chunk:
                raise RuntimeError("Chromium closed the pipe")
            self.buf += chunk
        msg, self.buf = self.buf.split(b"\0", 1)
        return json.loads(msg)

    def call(self, method, timeout=60, **params):
        self.next_id += 1
        msg = {"id": self.next_id, "method": method, "params": params}
        if self.session and not method.startswith("Target."):
            msg["sessionId"] = self.session
        os.write(self.to_child, json.dumps(msg).encode() + b"\0")
        deadline = time.time() + timeout
        while True:
            m = self._read(deadline)
            if m.get("id") == self.next_id:
                if "error" in m:
                    raise RuntimeError("%s: %s" % (method, m["error"]))
                return m.get("result", {})
            self.events.append(m)

    def wait_event(self, method, timeout=60):
        deadline = time.time() + timeout
        for k, m in enumerate(self.events):
            if m.get("method") == method:
                return self.events.pop(k)
        while True:
            m = self._read(deadline)
            if m.get("method") == method:
                return m
            self.events.append(m)

    def js(self, expr):
        r = self.call("Runtime.evaluate", expression=expr, returnByValue=True, awaitPromise=True)
        if "exceptionDetails" in r:
            raise RuntimeError("script error in %s: %s" % (expr[:60], r["exceptionDetails"]))
        return r["result"].get("value")

    def errors(self):
        out = []
        for m in self.events:
            if m.get("method") == "Runtime.exceptionThrown":
                out.append(json.dumps(m["params"]["exceptionDetails"])[:400])
            if m.get("method") == "Runtime.consoleAPICalled" and m["params"]["type"] == "error":
                out.append(json.dumps(m["params"]["args"])[:400])
        return out

    def close(self):
        try:
            self.call("Browser.close", timeout=10)
        except Exception:
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        os.close(self.to_child)
        os.close(self.from_child)
        shutil.rmtree(self.profile, ignore_errors=True)


def fail(what):
    print("FAIL: " + what, file=sys.stderr)
    sys.exit(1)


def main():
    report, shot = sys.argv[1], sys.argv[2]
    timing = "--time" in sys.argv[3:]
    pairs = [json.loads(l) for l in open(os.path.join(report, "pairs.jsonl"))]
    page = "file://" + os.path.abspath(os.path.join(report, "report.html"))
    b = Chromium()
    try:
        t0 = time.time()
        b.call("Page.navigate", url=page)
        b.wait_event("Page.loadEventFired", timeout=120)
        wall_load = time.time() - t0
        nav = b.js("(() => { const n = performance.getEntriesByType('navigation')[0];"
                   " return {load: n.loadEventEnd, dom: n.domContentLoadedEventEnd, resp: n.responseEnd,"
                   " js: window.leakauditReview && window.leakauditReview.timing}; })()")
        errs = b.errors()
        if errs:
            fail("script errors on load: " + "; ".join(errs))
        shown = b.js("window.leakauditReview && window.leakauditReview.links")
        print("check: the page lists every link of pairs.jsonl (%d)" % len(pairs))
        if shown != len(pairs):
            fail("the page has %r links, pairs.jsonl %d" % (shown, len(pairs)))
        first_rows = b.js("document.querySelectorAll('#la-body tr').length")
        if first_rows == 0:
            fail("the link table is empty")

        def count_after(set_js):
            return b.js("(() => { const S = window.leakauditReview.state; %s; S.page = 0;"
                        " window.leakauditReview.update(); return window.leakauditReview.matching(); })()" % set_js)

        reset = "S.kind = 0; S.grade = -1; S.part = -1; S.gates = -1; S.q = ''; S.col = null"
        kinds = ["family", "time", "exact", "near", "semantic"]
        for bit, k in enumerate(kinds):
            want = sum(1 for p in pairs if k in p["kinds"])
            print("check: filter kind %s: %d links" % (k, want))
            got = count_after(reset + "; S.kind = %d" % (1 << bit))
            if got != want:
                fail("kind %s: the page shows %d, pairs.jsonl has %d" % (k, got, want))
        # through the controls as a person uses them: the select and its change event
        grade_of = {"copy": 3, "near": 2, "related": 1, None: 0}
        for g, v in grade_of.items():
            want = sum(1 for p in pairs if p["grade"] == g)
            print("check: grade select %s: %d links" % (g, want))
            got = b.js("(() => { %s; const s = document.getElementById('la-grade'); s.value = '%d';"
                       " s.dispatchEvent(new Event('change')); return window.leakauditReview.matching(); })()"
                       % (reset.replace("S.", "window.leakauditReview.state."), v))
            if got != want:
                fail("grade %s: the page shows %d, pairs.jsonl has %d" % (g, got, want))
        b.js("document.getElementById('la-grade').value = '-1'")
        parts = sorted({p["split_a"] for p in pairs})
        for part_name in parts:
            want = sum(1 for p in pairs if part_name in (p["split_a"], p["split_b"]))
            idx = b.js("JSON.parse(document.getElementById('la-data').textContent).parts.indexOf(%s)" % json.dumps(part_name))
            print("check: filter partition %s: %d links" % (part_name, want))
            got = count_after(reset + "; S.part = %d" % idx)
            if got != want:
                fail("partition %s: the page shows %d, pairs.jsonl has %d" % (part_name, got, want))
        needle = pairs[len(pairs) // 2]["id_b"]
        want = sum(1 for p in pairs if needle.lower() in p["id_a"].lower() or needle.lower() in p["id_b"].lower())
        print("check: text search %r finds at least the %d links naming it" % (needle, want))
        got = count_after(reset + "; S.q = %s" % json.dumps(needle))
        if got < want:
            fail("search %r: the page shows %d, at least %d expected" % (needle, got, want))
        print("check: sorting by J puts the highest Jaccard first")
        b.js("(() => { const S = window.leakauditReview.state; %s; S.page = 0; window.leakauditReview.update(); })()" % reset)
        b.js("document.querySelector('#la-links th[data-col=j]').click()")
        top = b.js("document.querySelector('#la-body tr.link td:nth-child(3)').textContent")
        best = max((p["scores"].get("jaccard", -1) for p in pairs), default=-1)
        if best >= 0 and abs(float(top) - best) > 0.0051:
            fail("sorted by J the first row shows %s, the highest Jaccard is %.3f" % (top, best))
        b.js("document.getElementById('la-reset').click()")

        # filter timing: the grade filter and a text search over every row, each from a fresh state
        filt = b.js("(() => { const R = window.leakauditReview, S = R.state; const t0 = performance.now();"
                    " S.grade = 2; S.page = 0; R.update(); document.body.offsetHeight; const t1 = performance.now();"
                    " S.grade = -1; S.q = 'zzzz-not-there'; R.update(); document.body.offsetHeight;"
                    " const t2 = performance.now(); S.q = ''; R.update(); return [t1 - t0, t2 - t1]; })()")

        # open a pair: a related one with a frame when there is one, else the first
        with_frame = [k for k, p in enumerate(pairs) if p.get("shared_frame")]
        link = b.js("(() => { const L = JSON.parse(document.getElementById('la-data').textContent).links;"
                    " const k = L.frame.findIndex(f => f >= 0); return k; })()")
        if with_frame and link < 0:
            fail("pairs.jsonl has shared frames, the page none")
        target = link if link >= 0 else 0
        print("check: opening link %d shows both texts with shared and differing spans marked" % target)
        b.js("(() => { const S = window.leakauditReview.state; S.grade = -1; S.q = ''; S.page = 0;"
             " window.leakauditReview.update(); window.leakauditReview.openPair(%d); })()" % target)
        if b.js("document.getElementById('la-pair').hidden"):
            fail("the pair panel did not open")
        same = b.js("document.querySelectorAll('#la-side-a .same, #la-side-b .same').length")
        texts = b.js("[document.getElementById('la-side-a').textContent, document.getElementById('la-side-b').textContent]")
        if not texts[0] or not texts[1]:
            fail("a side of the pair is empty")
        if same == 0:
            fail("no shared span is marked")
        if link >= 0:
            differ = b.js("document.querySelectorAll('#la-side-b .only-b, #la-side-a .only-a').length")
            frame = b.js("document.getElementById('la-frame').hidden ? null :"
                         " document.getElementById('la-frame-text').textContent")
            print("check: the related link shows its template frame apart and marks the differing words")
            if not frame:
                fail("the template frame is not shown")
            if differ == 0:
                fail("no differing word is marked on a related link")
        clusters = [p["cluster"] for p in pairs if p["cluster"]]
        if clusters:
            c = clusters[0]
            members = {}
            for line in open(os.path.join(report, "clusters.jsonl")):
                j = json.loads(line)
                if j["cluster"] == c:
                    members = j["members"]
            print("check: cluster %d opens with its members per partition" % c)
            b.js("window.leakauditReview.openCluster(%d)" % c)
            heads = b.js("Array.from(document.querySelectorAll('#la-cluster-members h3')).map(h => h.textContent)")
            want_heads = ["%s: %d rows" % (p, len(ids)) for p, ids in members.items()]
            if sorted(heads) != sorted(want_heads):
                fail("cluster %d: the page shows %s, clusters.jsonl %s" % (c, heads, want_heads))
            b.js("window.leakauditReview.openPair(%d)" % target)
        # the screenshot: from the link list's heading to the end of the open pair, 25 rows a page
        box = b.js("(() => { const R = window.leakauditReview; R.state.size = 25; R.update();"
                   " const top = document.getElementById('links').getBoundingClientRect().top + scrollY;"
                   " const end = document.getElementById('la-pair').getBoundingClientRect().bottom + scrollY;"
                   " return [top, end, document.documentElement.clientWidth]; })()")
        png = base64.b64decode(b.call("Page.captureScreenshot", format="png", captureBeyondViewport=True,
                                      clip={"x": 0, "y": box[0], "width": box[2], "height": min(box[1] - box[0], 4000),
                                            "scale": 1})["data"])
        if not png.startswith(b"\x89PNG") or len(png) < 5000:
            fail("the screenshot is not a PNG of the page")
        with open(shot, "wb") as f:
            f.write(png)
        errs = b.errors()
        if errs:
            fail("script errors: " + "; ".join(errs))
        if timing:
            print("timing: %d links, page %d bytes: load event %.0f ms after navigation start (DOMContentLoaded %.0f ms;"
                  " wall %.0f ms; file read by %.0f ms, JSON.parse %.0f ms, first list %.0f ms); grade filter %.1f ms;"
                  " text search over every row %.1f ms"
                  % (len(pairs), os.path.getsize(os.path.join(report, "report.html")), nav["load"], nav["dom"],
                     1000 * wall_load, nav["resp"], nav["js"]["parse_ms"], nav["js"]["setup_ms"], filt[0], filt[1]))
    finally:
        b.close()
    print("PASS: %s (%d links), screenshot %s" % (report, len(pairs), shot))


if __name__ == "__main__":
    main()
