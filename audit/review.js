/*
 * review.js - report.html's link list: every link of the audit, filtered (kind, grade, partition,
 * text), sorted by any column, paged; a pair side by side with its shared spans and differing
 * words aligned token by token and the template frame apart; a cluster with its members per
 * partition and the evidence that joined them. Reads the JSON in the element la-data
 * (audit/report_review.c); builds every element with textContent, never from markup in the data.
 * Embedded into the page by cmake/review_page.cmake; fetches nothing.
 */
(function () {
  "use strict";
  var t0 = performance.now();
  var D = JSON.parse(document.getElementById("la-data").textContent);
  var tParsed = performance.now();
  var L = D.links, R = D.rows, N = L.a.length;
  var GRADES = ["", "related", "near", "copy"];
  var $ = function (id) { return document.getElementById(id); };

  function el(tag, attrs, text) {
    var e = document.createElement(tag);
    if (attrs) for (var k in attrs) if (attrs[k] !== undefined) e.setAttribute(k, attrs[k]);
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  }
  function kindsText(bits) {
    var out = [];
    for (var k = 0; k < D.kinds.length; k++) if (bits & (1 << k)) out.push(D.kinds[k]);
    return out.join(", ");
  }
  function num(v, digits) { return v === null || v === undefined ? "" : (v / 1000).toFixed(digits || 3); }
  function snippet(s, n) { s = s.replace(/\s+/g, " "); return s.length > n ? s.slice(0, n) + "\u2026" : s; }

  /* ---- state, filtering, sorting, paging ---- */
  var S = { kind: 0, grade: -1, part: -1, gates: -1, q: "", col: null, dir: 1, group: true, page: 0, size: 50 };
  var view = new Int32Array(0);   /* link indices, or -(cluster+1) for "more links in this cluster" */
  var matching = 0, lower = null;

  function rowMatches(r, q) {
    if (!lower) { lower = new Array(R.id.length); }
    if (lower[r] === undefined) lower[r] = (R.id[r] + "\n" + R.text[r]).toLowerCase();
    return lower[r].indexOf(q) >= 0;
  }
  var SORTS = {
    grade: function (i) { return L.grade[i]; },
    j: function (i) { return L.j[i]; }, c: function (i) { return L.c[i]; },
    cos: function (i) { return L.cos[i]; }, wc: function (i) { return L.wc[i]; },
    cluster: function (i) { return L.cluster[i] || Infinity; },
    kinds: function (i) { return kindsText(L.kinds[i]); },
    a: function (i) { return R.id[L.a[i]]; }, b: function (i) { return R.id[L.b[i]]; }
  };

  function compute() {
    var q = S.q.trim().toLowerCase(), out = [];
    for (var i = 0; i < N; i++) {
      if (S.kind && !(L.kinds[i] & S.kind)) continue;
      if (S.grade >= 0 && L.grade[i] !== S.grade) continue;
      if (S.gates >= 0 && L.gates[i] !== S.gates) continue;
      if (S.part >= 0 && R.part[L.a[i]] !== S.part && R.part[L.b[i]] !== S.part) continue;
      if (q && !rowMatches(L.a[i], q) && !rowMatches(L.b[i], q)) continue;
      out.push(i);
    }
    matching = out.length;
    if (S.col) {
      var key = SORTS[S.col], dir = S.dir;
      var keys = out.map(key);
      var pos = out.map(function (_, k) { return k; });
      pos.sort(function (x, y) {
        var a = keys[x], b = keys[y];
        var an = a === null || a === undefined, bn = b === null || b === undefined;
        if (an || bn) return an === bn ? x - y : an ? 1 : -1;   /* unmeasured last either way */
        return a < b ? -dir : a > b ? dir : x - y;
      });
      out = pos.map(function (k) { return out[k]; });
    } else if (S.group) {
      /* review order keeps a cluster's links together: show its first three, then one "more" row */
      var shown = {}, grouped = [];
      for (var k = 0; k < out.length; k++) {
        var c = L.cluster[out[k]];
        if (!c) { grouped.push(out[k]); continue; }
        shown[c] = (shown[c] || 0) + 1;
        if (shown[c] <= 3) grouped.push(out[k]);
        else if (shown[c] === 4) grouped.push(-(c + 1));
      }
      var extra = {};
      for (var c2 in shown) extra[c2] = shown[c2] - 3;
      S.extra = extra;
      out = grouped;
    }
    view = Int32Array.from(out);
    var pages = Math.max(1, Math.ceil(view.length / S.size));
    if (S.page >= pages) S.page = pages - 1;
  }

  function render() {
    var body = $("la-body");
    var rows = document.createDocumentFragment();
    var from = S.page * S.size, to = Math.min(view.length, from + S.size);
    for (var k = from; k < to; k++) {
      var i = view[k];
      if (i < 0) {
        var c = -i - 1;
        var tr = el("tr", { "class": "more", "data-cluster": c });
        tr.appendChild(el("td", { colspan: 9 }, "\u2026 " + S.extra[c] + " more matching links in cluster " + c +
          ": open the cluster"));
        rows.appendChild(tr);
        continue;
      }
      var t = el("tr", { "class": "link" + (openLink === i ? " open" : ""), "data-link": i });
      t.appendChild(el("td", { "class": "g" + L.grade[i] }, GRADES[L.grade[i]] || "\u2014"));
      t.appendChild(el("td", { "class": "wrap" }, kindsText(L.kinds[i]) + (L.gates[i] ? "" : " (not gating)")));
      t.appendChild(el("td", { "class": "n" }, num(L.j[i], 2)));
      t.appendChild(el("td", { "class": "n" }, num(L.c[i], 2)));
      t.appendChild(el("td", { "class": "n" }, num(L.cos[i], 2)));
      t.appendChild(el("td", { "class": "n" }, num(L.wc[i], 2)));
      var sa = el("td", { "class": "snip" }); sa.appendChild(el("b", null, R.id[L.a[i]]));
      sa.appendChild(document.createTextNode(" (" + D.parts[R.part[L.a[i]]] + ") " + snippet(R.text[L.a[i]], 90)));
      var sb = el("td", { "class": "snip" }); sb.appendChild(el("b", null, R.id[L.b[i]]));
      sb.appendChild(document.createTextNode(" " + snippet(R.text[L.b[i]], 90)));
      t.appendChild(sa); t.appendChild(sb);
      t.appendChild(el("td", { "class": "n" }, L.cluster[i] || ""));
      rows.appendChild(t);
    }
    body.textContent = "";
    body.appendChild(rows);
    var pages = Math.max(1, Math.ceil(view.length / S.size));
    $("la-count").textContent = matching === N ? N + " links" : matching + " of " + N + " links match";
    $("la-page").textContent = view.length ? "rows " + (from + 1) + "\u2013" + to + " of " + view.length +
      ", page " + (S.page + 1) + " of " + pages : "nothing matches";
    var ths = document.querySelectorAll("#la-links th.sort");
    for (var h = 0; h < ths.length; h++) {
      var col = ths[h].getAttribute("data-col");
      if (col === S.col) ths[h].setAttribute("aria-sort", S.dir > 0 ? "ascending" : "descending");
      else ths[h].removeAttribute("aria-sort");
    }
  }
  function update() { compute(); render(); }

  /* ---- token alignment ---- */
  var TOKEN = /[\p{L}\p{N}]+|\s+|[^\p{L}\p{N}\s]/gu;
  function tokens(s) { return s.match(TOKEN) || []; }
  function isSpace(t) { return /^\s+$/.test(t); }

  /* Flags per token of a and b: 1 where the token is part of what both share, in order. Trims the
   * common head and tail, aligns the middle by longest common subsequence when it is small enough,
   * else marks the words inside a 3-word run the other text also has. Matches of one lone word
   * between differences are dropped: "the" in common says nothing. */
  function align(ta, tb) {
    var ia = [], ib = [], ka = [], kb = [];
    ta.forEach(function (t, k) { if (!isSpace(t)) { ia.push(k); ka.push(t.toLowerCase()); } });
    tb.forEach(function (t, k) { if (!isSpace(t)) { ib.push(k); kb.push(t.toLowerCase()); } });
    var n = ka.length, m = kb.length, fa = new Uint8Array(n), fb = new Uint8Array(m);
    var h = 0;
    while (h < n && h < m && ka[h] === kb[h]) { fa[h] = fb[h] = 1; h++; }
    var t = 0;
    while (t < n - h && t < m - h && ka[n - 1 - t] === kb[m - 1 - t]) { fa[n - 1 - t] = fb[m - 1 - t] = 1; t++; }
    var n2 = n - h - t, m2 = m - h - t;
    if (n2 > 0 && m2 > 0 && n2 * m2 <= 4e6) {
      var w = m2 + 1, T = new Uint16Array((n2 + 1) * w);
      for (var x = n2 - 1; x >= 0; x--)
        for (var y = m2 - 1; y >= 0; y--)
          T[x * w + y] = ka[h + x] === kb[h + y] ? T[(x + 1) * w + y + 1] + 1
                       : Math.max(T[(x + 1) * w + y], T[x * w + y + 1]);
      var x2 = 0, y2 = 0;
      while (x2 < n2 && y2 < m2) {
        if (ka[h + x2] === kb[h + y2]) { fa[h + x2] = fb[h + y2] = 1; x2++; y2++; }
        else if (T[(x2 + 1) * w + y2] >= T[x2 * w + y2 + 1]) x2++;
        else y2++;
      }
      drop_lone(fa, h, n - t); drop_lone(fb, h, m - t);
    } else if (n2 > 0 && m2 > 0) {
      var grams = function (k, from, to) {
        var s = new Set();
        for (var q = from; q + 2 < to; q++) s.add(k[q] + " " + k[q + 1] + " " + k[q + 2]);
        return s;
      };
      var mark = function (k, f, from, to, other) {
        for (var q = from; q + 2 < to; q++)
          if (other.has(k[q] + " " + k[q + 1] + " " + k[q + 2])) f[q] = f[q + 1] = f[q + 2] = 1;
      };
      mark(ka, fa, h, n - t, grams(kb, h, m - t));
      mark(kb, fb, h, m - t, grams(ka, h, n - t));
    }
    /* back to every token: a space is shared when the words on both sides of it are */
    function spread(toks, idx, f) {
      var out = new Uint8Array(toks.length), k = 0;
      for (var p = 0; p < toks.length; p++) {
        if (k < idx.length && idx[k] === p) { out[p] = f[k]; k++; }
        else out[p] = k > 0 && k < idx.length && f[k - 1] && f[k] ? 1 : 2; /* 2: a space, no mark */
      }
      return out;
    }
    return [spread(ta, ia, fa), spread(tb, ib, fb)];
  }
  function drop_lone(f, from, to) {
    for (var k = Math.max(from, 1); k < Math.min(to, f.length - 1); k++)
      if (f[k] && !f[k - 1] && !f[k + 1]) f[k] = 0;
  }

  /* Text as runs of spans: shared, only on this side, or plain (spaces between differences). */
  function paint(box, toks, flags, onlyClass) {
    box.textContent = "";
    var k = 0;
    while (k < toks.length) {
      var f = flags[k], s = "", e = k;
      while (e < toks.length && flags[e] === f) { s += toks[e]; e++; }
      if (f === 2) box.appendChild(document.createTextNode(s));
      else box.appendChild(el("span", { "class": f ? "same" : onlyClass }, s));
      k = e;
    }
  }

  /* ---- the pair and the cluster ---- */
  var openLink = -1;
  function openPair(i) {
    openLink = i;
    var a = L.a[i], b = L.b[i], P = $("la-pair");
    P.hidden = false;
    $("la-pair-title").textContent = (GRADES[L.grade[i]] || "ungraded") + " link: " + R.id[a] + " (" +
      D.parts[R.part[a]] + ") and " + R.id[b] + " (" + D.parts[R.part[b]] + ")";
    var facts = [kindsText(L.kinds[i]), L.gates[i] ? "fails the gate" : "does not fail the gate"];
    [["J", L.j[i]], ["C", L.c[i]], ["cos", L.cos[i]], ["wC", L.wc[i]]].forEach(function (s) {
      if (s[1] !== null) facts.push(s[0] + " " + num(s[1]));
    });
    $("la-pair-facts").textContent = facts.join("; ");
    var cl = $("la-pair-cluster");
    cl.textContent = "";
    if (L.cluster[i]) {
      cl.appendChild(document.createTextNode("Cluster "));
      var btn = el("button", { "class": "linkish", "data-cluster": L.cluster[i] }, L.cluster[i]);
      cl.appendChild(btn);
      cl.appendChild(document.createTextNode(" (its rows move together)."));
    } else {
      cl.textContent = "In no cluster: this link moves no rows.";
    }
    var ta = tokens(R.text[a]), tb = tokens(R.text[b]);
    var fl = align(ta, tb);
    $("la-side-a-head").textContent = "seen: " + R.id[a] + " (" + D.parts[R.part[a]] + ")";
    $("la-side-b-head").textContent = "held out: " + R.id[b] + " (" + D.parts[R.part[b]] + ")";
    paint($("la-side-a"), ta, fl[0], "only-a");
    paint($("la-side-b"), tb, fl[1], "only-b");
    var fr = L.frame[i] >= 0 ? D.frames[L.frame[i]] : null, fbox = $("la-frame");
    fbox.hidden = !fr;
    if (fr) $("la-frame-text").textContent = fr;
    var cut = [a, b].filter(function (r) { return D.rows.cut.indexOf(r) >= 0; });
    $("la-cut").textContent = cut.length ? "Texts are shown up to " + D.text_max + " bytes; cut here: " +
      cut.map(function (r) { return R.id[r]; }).join(", ") + " (the whole rows are in the manifests)." : "";
    render();
    location.hash = "link-" + i;
  }

  function openCluster(c) {
    var P = $("la-cluster");
    P.hidden = false;
    var parts = {}, kinds = {}, nl = 0, first = -1;
    for (var r = 0; r < R.id.length; r++)
      if (R.cluster[r] === c) (parts[R.part[r]] = parts[R.part[r]] || []).push(r);
    for (var i = 0; i < N; i++) {
      if (L.cluster[i] !== c) continue;
      nl++;
      if (first < 0) first = i;
      for (var k = 0; k < D.kinds.length; k++) if (L.kinds[i] & (1 << k)) kinds[D.kinds[k]] = (kinds[D.kinds[k]] || 0) + 1;
    }
    var suspect = D.suspect.indexOf(c) >= 0;
    $("la-cluster-title").textContent = "Cluster " + c + (suspect ? " (suspect: more rows than --max-cluster)" : "");
    var ev = Object.keys(kinds).map(function (k) { return k + " " + kinds[k]; }).join(", ");
    $("la-cluster-facts").textContent = nl + " links joined these rows; evidence: " + (ev || "none") +
      " (a link may carry several kinds).";
    var box = $("la-cluster-members");
    box.textContent = "";
    Object.keys(parts).sort(function (x, y) { return x - y; }).forEach(function (p) {
      box.appendChild(el("h3", null, D.parts[p] + ": " + parts[p].length + " rows"));
      var ul = el("ul", { "class": "members" });
      parts[p].sort(function (x, y) { return R.id[x] < R.id[y] ? -1 : R.id[x] > R.id[y] ? 1 : 0; });
      parts[p].slice(0, 500).forEach(function (r) {
        ul.appendChild(el("li", null, R.id[r] + (R.out[r] < 0 ? " \u2192 quarantine" : "") + ": " + snippet(R.text[r], 80)));
      });
      if (parts[p].length > 500) ul.appendChild(el("li", null, "\u2026 and " + (parts[p].length - 500) + " more (clusters.jsonl)"));
      box.appendChild(ul);
    });
    var fb = $("la-cluster-first");
    fb.hidden = first < 0;
    fb.setAttribute("data-link", first);
    location.hash = "cluster-" + c;
  }

  /* ---- wiring ---- */
  function setup() {
    var kind = $("la-kind");
    D.kinds.forEach(function (k, b) { kind.appendChild(el("option", { value: 1 << b }, k)); });
    var part = $("la-part");
    D.parts.forEach(function (p, k) { part.appendChild(el("option", { value: k }, p)); });
    kind.onchange = function () { S.kind = +kind.value; S.page = 0; update(); };
    $("la-grade").onchange = function () { S.grade = +this.value; S.page = 0; update(); };
    $("la-gates").onchange = function () { S.gates = +this.value; S.page = 0; update(); };
    part.onchange = function () { S.part = +part.value; S.page = 0; update(); };
    var timer = 0;
    $("la-q").oninput = function () {
      var v = this.value;
      clearTimeout(timer);
      timer = setTimeout(function () { S.q = v; S.page = 0; update(); }, 120);
    };
    $("la-group").onchange = function () { S.group = this.checked; S.page = 0; update(); };
    $("la-size").onchange = function () { S.size = +this.value; S.page = 0; update(); };
    $("la-first").onclick = function () { S.page = 0; render(); };
    $("la-prev").onclick = function () { if (S.page > 0) S.page--; render(); };
    $("la-next").onclick = function () { if ((S.page + 1) * S.size < view.length) S.page++; render(); };
    $("la-last").onclick = function () { S.page = Math.max(0, Math.ceil(view.length / S.size) - 1); render(); };
    $("la-reset").onclick = function () { S.col = null; S.dir = 1; S.page = 0; update(); };
    var ths = document.querySelectorAll("#la-links th.sort");
    for (var h = 0; h < ths.length; h++)
      ths[h].onclick = function () {
        var col = this.getAttribute("data-col");
        if (S.col === col) S.dir = -S.dir;
        else { S.col = col; S.dir = col === "a" || col === "b" || col === "kinds" || col === "cluster" ? 1 : -1; }
        S.page = 0; update();
      };
    document.addEventListener("click", function (e) {
      var t = e.target.closest("[data-link],[data-cluster]");
      if (!t || t.tagName === "OPTION") return;
      if (t.hasAttribute("data-link")) {
        openPair(+t.getAttribute("data-link"));
        $("la-pair").scrollIntoView({ block: "nearest" });
      } else {
        openCluster(+t.getAttribute("data-cluster"));
        $("la-cluster").scrollIntoView({ block: "nearest" });
      }
    });
    $("la-review").hidden = false;
    update();
    var m = /^#(link|cluster)-(\d+)$/.exec(location.hash);
    if (m && m[1] === "link" && +m[2] < N) openPair(+m[2]);
    if (m && m[1] === "cluster" && +m[2] <= D.clusters && +m[2] > 0) openCluster(+m[2]);
  }
  /* what the page's test reads: the links shown and how long loading took */
  window.leakauditReview = {
    links: N, timing: {}, view: function () { return Array.from(view); }, matching: function () { return matching; },
    openPair: openPair, openCluster: openCluster, state: S, update: update
  };
  setup();
  window.leakauditReview.timing = { parse_ms: tParsed - t0, setup_ms: performance.now() - tParsed };
})();
