// 静态阅读版的小脚本(sitebuild/reading.py 复制到站点根目录,每页 defer 加载)。
// 页面不靠它也能读:这里只加复制按钮、搜索(Pagefind,第一次用时才下载索引)、手机上的目录抽屉
// 和打印前展开折叠内容。
(function () {
  "use strict";
  var me = document.currentScript;
  var root = (me && me.getAttribute("data-root")) || "";

  // 复制按钮:复制单元格的源码(不含输出)
  document.querySelectorAll("pre.code").forEach(function (pre) {
    var b = document.createElement("button");
    b.type = "button";
    b.className = "copy";
    b.textContent = "复制";
    b.setAttribute("aria-label", "复制这段代码");
    b.addEventListener("click", function () {
      var text = pre.innerText.replace(/\n$/, "");
      var done = function () { b.textContent = "已复制"; setTimeout(function () { b.textContent = "复制"; }, 1500); };
      if (navigator.clipboard && window.isSecureContext) {
        navigator.clipboard.writeText(text).then(done, function () { fallback(text); done(); });
      } else { fallback(text); done(); }
    });
    pre.insertAdjacentElement("afterend", b);
  });

  function fallback(text) {
    var t = document.createElement("textarea");
    t.value = text;
    t.style.position = "fixed";
    t.style.opacity = "0";
    document.body.appendChild(t);
    t.select();
    try { document.execCommand("copy"); } catch (e) { /* 无能为力:读者可以手动选中 */ }
    t.remove();
  }

  // 窄屏:本页目录默认收起;课程目录抽屉点链接或点外面就关上
  var toc = document.querySelector(".toc details");
  if (toc && window.matchMedia("(max-width: 1200px)").matches) toc.open = false;
  var toggle = document.getElementById("nav-toggle");
  if (toggle) {
    document.addEventListener("click", function (e) {
      if (!toggle.checked) return;
      var nav = document.getElementById("course-nav");
      var inNav = nav && nav.contains(e.target);
      var onMenu = e.target.closest && e.target.closest(".menu, .nav-toggle");
      if ((inNav && e.target.closest("a")) || (!inNav && !onMenu)) toggle.checked = false;
    });
    var menu = document.querySelector("label.menu");
    document.addEventListener("keydown", function (e) {
      if (e.key === "Escape" && toggle.checked) { toggle.checked = false; if (menu) menu.focus(); }
    });
    // ☰ and 关闭 × are labels: make Enter / Space work on them, and move focus into the opened menu
    document.querySelectorAll("label[for='nav-toggle']").forEach(function (label) {
      label.addEventListener("keydown", function (e) {
        if (e.key !== "Enter" && e.key !== " ") return;
        e.preventDefault();
        toggle.checked = !toggle.checked;
        var link = document.querySelector("#course-nav a");
        if (toggle.checked && link) setTimeout(function () { link.focus(); }, 220);
        else if (menu) menu.focus();
      });
    });
  }

  // 打印:折叠的内容也打印出来
  var reopened = [];
  window.addEventListener("beforeprint", function () {
    document.querySelectorAll("details:not([open])").forEach(function (d) { d.open = true; reopened.push(d); });
  });
  window.addEventListener("afterprint", function () {
    reopened.forEach(function (d) { d.open = false; });
    reopened = [];
  });

  // 搜索:Pagefind 的索引按需下载;结果链接到章节里的小节
  var input = document.getElementById("search");
  var box = document.getElementById("search-results");
  if (!input || !box) return;
  var pagefind = null, timer = null, seq = 0, ready = false;
  // pages whose sections are ranked: a section that names the query can sit on a page Pagefind ranks lower
  var PAGES = 16;
  function load() {
    if (!pagefind) {
      var base = new URL(root || "./", location.href);
      pagefind = import(new URL("pagefind/pagefind.js", base).href).then(function (pf) {
        return pf.options({ baseUrl: base.pathname }).then(function () { return pf; });
      });
    }
    return pagefind;
  }
  function esc(s) {
    return String(s).replace(/[&<>"]/g, function (c) { return { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" }[c]; });
  }
  function show(html) { box.innerHTML = html; box.hidden = false; }
  // 「课程讲解」「课程代码」在每一节都有(id 是「节--课程讲解」):命中它们就是命中所在的那一节,合并成一条
  var GENERIC = ["课程讲解", "课程代码"];
  function sectionOf(s) {
    var parts = String(s.url).split("#"), frag = decodeURIComponent(parts[1] || "");
    var cut = frag.lastIndexOf("--");
    if (cut > 0 && GENERIC.indexOf(frag.slice(cut + 2)) >= 0) {
      var id = frag.slice(0, cut);
      return { key: parts[0] + "#" + id, url: parts[0] + "#" + encodeURIComponent(id), title: id.replace(/-/g, " "), folded: true };
    }
    return { key: parts[0] + "#" + frag, url: s.url, title: s.title, folded: false };
  }
  // 标题的种类:章标题最先;编号小节和「🟢 必读」(正文)其次;其他小标题(选读等)再次;然后是练习;
  // 测验、小结、附录,以及关键词索引、术语表这些索引页最后
  function kindOf(title, page) {
    var t = String(title).trim();
    if (/关键词索引|术语表/.test(page)) return 4;
    if (/^(入门|进阶)?\s*\d{2} · /.test(t)) return 0;
    if (/^(\d+\.\d+ |🟢)/.test(t)) return 1;
    if (/^练习 /.test(t)) return 3;
    if (/^(第 \d+ 题|测验|小结|附录|本章更新说明|练习$)/.test(t)) return 4;
    return 2;
  }
  // Pagefind 1.5.2 can load the wrong index chunk for a word with "_" or "." when the index happens to split
  // next to it (Pagefind/pagefind#795): "block_until_ready" found nothing until "block" had been searched.
  // On an empty result, search the parts first (that loads their chunks), then the whole query again.
  function search(pf, q) {
    return pf.search(q).then(function (r) {
      var parts = q.split(/[_.\s]+/).filter(Boolean);
      if (r.results.length || parts.length < 2) return r;
      return Promise.all(parts.map(function (t) { return pf.search(t); })).then(function () { return pf.search(q); });
    });
  }
  function run() {
    var q = input.value.trim(), mine = ++seq;
    if (!q) { box.hidden = true; return; }
    if (!ready) show("<p>正在加载搜索索引……</p>");   // the first search downloads it (seconds on a slow phone)
    load().then(function (pf) { return search(pf, q); }).then(function (r) {
      return Promise.all(r.results.slice(0, PAGES).map(function (x) { return x.data(); }));
    }).then(function (pages) {
      ready = true;
      if (mine !== seq) return;
      if (!pages.length) { show("<p>没有找到「" + esc(q) + "」。试试更短的词，或 API 名（如 vmap、block_until_ready）。</p>"); return; }
      var terms = q.toLowerCase().split(/\s+/).filter(Boolean);
      var hits = [], seen = {};
      pages.forEach(function (p, rank) {
        var title = p.meta && p.meta.title ? p.meta.title : p.url;
        var subs = (p.sub_results || []).filter(function (s) { return s.url !== p.url; });
        if (!subs.length) subs = [{ url: p.url, title: title, excerpt: p.excerpt, weighted_locations: [] }];
        subs.forEach(function (s) {
          var score = (s.weighted_locations || []).reduce(function (n, w) { return n + (w.balanced_score || 0); }, 0);
          var sec = sectionOf(s), h = seen[sec.key];
          if (!h) {
            h = seen[sec.key] = { url: sec.url, title: sec.title, page: title, rank: rank, score: 0, best: -1, excerpt: "" };
            hits.push(h);
          }
          if (!sec.folded) h.title = s.title;   // the section's own heading, when it matched too
          h.score += score;
          if (score > h.best) { h.best = score; h.excerpt = s.excerpt; }
        });
      });
      // Pagefind ranks pages; a section whose heading names the query comes first; among those, the chapter
      // and its teaching text before exercises, quizzes and index pages (kindOf); then by page, then by
      // Pagefind's scores of the matches in the section (its 课程讲解/课程代码 included)
      hits.forEach(function (h) {
        var named = terms.every(function (t) { return String(h.title).toLowerCase().indexOf(t) >= 0; });
        h.key = [named ? 0 : 1, named ? kindOf(h.title, h.page) : 0, h.rank, -h.score];
      });
      hits.sort(function (a, b) {
        for (var i = 0; i < a.key.length; i++) if (a.key[i] !== b.key[i]) return a.key[i] - b.key[i];
        return 0;
      });
      show(hits.slice(0, 10).map(function (h) {
        return '<a href="' + esc(h.url) + '"><span class="hit-title">' + esc(h.title) + "</span> " +
               '<span class="hit-page">' + esc(h.page) + "</span><p>" + h.excerpt + "</p></a>";
      }).join(""));
    }).catch(function (e) {
      console.warn("course-read: 搜索不可用", e);
      show("<p>搜索索引没能加载（用 file:// 打开时不可用；请用 ./dev serve 或在线站点）。</p>");
    });
  }
  input.addEventListener("focus", function () { load().catch(function () {}); });
  input.addEventListener("input", function () { clearTimeout(timer); timer = setTimeout(run, 180); });
  input.addEventListener("keydown", function (e) {
    if (e.key === "Escape") { box.hidden = true; input.blur(); }
    if (e.key === "Enter") { var a = box.querySelector("a"); if (a && !box.hidden) location.href = a.href; }
  });
  document.addEventListener("click", function (e) { if (!e.target.closest(".search")) box.hidden = true; });
  document.addEventListener("keydown", function (e) {
    if (e.key === "/" && document.activeElement === document.body) { e.preventDefault(); input.focus(); }
  });
})();
