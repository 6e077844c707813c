// 快速预览(由 tools/site.py build 注入到 notebooks/index.html,在 JupyterLite 启动前运行)。
//
// 阅读界面(JupyterLab)要下载并执行约 8 MB 脚本才显示第一个输出:开发机 2 核 3–4 秒,慢网络或手机上
// 要久得多。这里先用一个很小的渲染器(markdown 交给 marked,也就是 JupyterLab 用的那个库)把 notebook
// 的文字和保存的输出显示在一层只读的覆盖页上,读者马上能读。JupyterLab 显示出同一个 notebook 后,
// 把读者正在读的那一格滚到同一位置,再移除覆盖页;读者也可以点「关闭预览」直接切换。
// 显示的是读者在本版本里保存过的副本(若有),否则是站点上的原版:与 JupyterLab 随后打开的是同一份。
// 公式不排版(原样显示 $…$),代码不着色。出错只记到控制台:覆盖页还没出现就不出现,已经出现就移除。
(function () {
  "use strict";
  var params = new URLSearchParams(location.search);
  var path = params.get("path");
  if (!path || !/\.ipynb$/i.test(path) || params.has("reset") || params.has("clone")) return;

  var MARKED = "../course-marked.js";
  var FILES = "../files/";
  //: JupyterLab 已经画好、却迟迟没画出读者所在的那一格时,最多再等这么久就交接
  var SYNC_GIVE_UP_MS = 30000;
  var POLL_MS = 100;
  var START_WAIT_MS = 1500;
  var ANSI = /\x1b\[[0-9;?]*[A-Za-z]/g;

  // 从阅读版的「在浏览器里运行」来(地址是 #cell-<id>)的读者刚在阅读版读过那一格,要的是运行它:这里不铺
  // 整章预览(它和 JupyterLab 抢主线程,JupyterLab 要等它画好才启动,内核又要等 notebook 打开才启动),只在
  // 顶上放一行说明,JupyterLab 画出第一格就撤掉。开发机上这样 notebook 早约 0.5 秒打开(tools/site.py bench --lite)。
  if (/^#cell-/.test(location.hash)) {
    opening();
    return;
  }

  function warn(what, e) { console.warn("course-preview: " + what + ":", e); }
  function text(src) { return Array.isArray(src) ? src.join("") : (src || ""); }
  function el(tag, cls, content) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (content != null) e.textContent = content;
    return e;
  }
  function escapeHtml(s) {
    return s.replace(/[&<>"]/g, function (c) { return { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" }[c]; });
  }
  function filesUrl(p) { return FILES + p.split("/").map(encodeURIComponent).join("/"); }
  function loadScript(src) {
    return new Promise(function (ok, fail) {
      var s = document.createElement("script");
      s.src = src;
      s.onload = ok;
      s.onerror = function () { fail(new Error("cannot load " + src)); };
      document.head.appendChild(s);
    });
  }

  // ---- 渲染 -------------------------------------------------------------------------------------

  // 在一个不加载资源的文档里解析 HTML,只留下安全的部分再放进页面(读者的副本可能含任意 HTML):
  // 去掉会执行或嵌入内容的元素、事件属性和样式属性;地址类属性只留 http(s)、mailto 和图片的 data:
  var inert = document.implementation.createHTMLDocument("");
  var DROP = "script,style,iframe,frame,frameset,object,embed,applet,link,meta,base,form,input,button,textarea," +
    "select,area,map,use,animate,set,animatemotion,animatetransform,foreignobject,template,noscript";
  var URL_ATTR = /^(href|src|srcset|action|formaction|poster|background|xlink:href|data)$/i;
  function safeUrl(value, tag, name) {
    var u;
    try { u = new URL(value, location.href); } catch (e) { return false; }
    if (u.protocol === "http:" || u.protocol === "https:" || u.protocol === "mailto:") return true;
    return u.protocol === "data:" && tag === "img" && name === "src" && /^data:image\/(png|jpeg|gif|webp);/i.test(value.trim());
  }
  function safeHtml(html) {
    var box = inert.createElement("div");
    box.innerHTML = html;
    box.querySelectorAll(DROP).forEach(function (n) { n.remove(); });
    box.querySelectorAll("*").forEach(function (n) {
      Array.prototype.slice.call(n.attributes).forEach(function (a) {
        var name = a.name.toLowerCase();
        if (/^on/.test(name) || name === "style" || name === "srcdoc" || name === "formaction" ||
            (URL_ATTR.test(name) && !safeUrl(a.value, n.localName.toLowerCase(), name))) {
          n.removeAttribute(a.name);
        }
      });
    });
    var frag = document.createDocumentFragment();
    while (box.firstChild) frag.appendChild(document.adoptNode(box.firstChild));
    return frag;
  }

  function markdown(src) {
    // 公式先换成占位符,免得 marked 把其中的 _ 和 * 当成强调;渲染后原样放回
    var math = [];
    var held = src.replace(/\$\$[\s\S]+?\$\$|\$[^$\n]+?\$/g, function (m) {
      math.push(m);
      return "@@cpvmath" + (math.length - 1) + "@@";
    });
    var html = window.marked.parse(held, { gfm: true });
    return html.replace(/@@cpvmath(\d+)@@/g, function (_, i) {
      return '<span class="cpv-math">' + escapeHtml(math[+i]) + "</span>";
    });
  }

  function image(mime, data) {
    var img = el("img");
    img.alt = mime;
    img.src = mime === "image/svg+xml" ? "data:image/svg+xml;charset=utf-8," + encodeURIComponent(text(data))
      : "data:" + mime + ";base64," + text(data).replace(/\s/g, "");
    return img;
  }

  function output(out) {
    var box = el("div", "cpv-output");
    if (out.output_type === "stream") {
      box.appendChild(el("pre", out.name === "stderr" ? "cpv-stderr" : "", text(out.text).replace(ANSI, "")));
    } else if (out.output_type === "error") {
      box.appendChild(el("pre", "cpv-error", (out.traceback || []).join("\n").replace(ANSI, "")));
    } else {
      var d = out.data || {};
      var img = ["image/png", "image/jpeg", "image/gif", "image/svg+xml"].filter(function (m) { return d[m]; })[0];
      if (img) box.appendChild(image(img, d[img]));
      else if (d["text/html"]) box.appendChild(el("div", "cpv-html")).appendChild(safeHtml(text(d["text/html"])));
      else if (d["text/markdown"]) box.appendChild(el("div", "cpv-md")).appendChild(safeHtml(markdown(text(d["text/markdown"]))));
      else if (d["text/plain"]) box.appendChild(el("pre", "", text(d["text/plain"]).replace(ANSI, "")));
      else return null;
    }
    return box;
  }

  function renderCell(cell, index) {
    try {
      return drawCell(cell, index);
    } catch (e) {
      warn("第 " + index + " 格显示失败，改为显示原文", e);
      var c = el("div", "cpv-cell");
      c.setAttribute("data-index", index);
      c.appendChild(el("pre", "cpv-code", text(cell && cell.source)));
      return c;
    }
  }

  function drawCell(cell, index) {
    var c = el("div", "cpv-cell cpv-" + cell.cell_type);
    c.setAttribute("data-index", index);   // 与 JupyterLab 的 data-windowed-list-index 对应
    if (cell.cell_type === "markdown") {
      c.appendChild(safeHtml(markdown(text(cell.source))));
    } else if (cell.cell_type === "code") {
      c.appendChild(el("pre", "cpv-code", text(cell.source)));
      (cell.outputs || []).forEach(function (o) {
        var box = output(o);
        if (box) c.appendChild(box);
      });
    } else {
      return null;
    }
    links(c);
    return c;
  }

  // 只画读者看得到的部分:先画到视口以下约 AHEAD 屏,读者往下滚时再补。
  // 整章一次画完(上百格)要和 JupyterLab 的启动抢约 0.8 秒 CPU:它每加一张样式表,浏览器都要把
  // 整个页面(包括预览)重新算一遍样式。
  var AHEAD = 2;
  var fill = function () {};
  function filler(layer, main, cells) {
    var next = 0;
    return function (until) {   // until():还要接着画的额外条件(例如锚点还没画出来)
      var want = layer.scrollTop + layer.clientHeight * (AHEAD + 1);
      while (next < cells.length && (main.offsetHeight < want || (until && until()))) {
        for (var end = Math.min(cells.length, next + 4); next < end; next++) {
          var c = renderCell(cells[next], next);
          if (c) main.appendChild(c);
        }
      }
    };
  }

  // ---- 链接与标题 ---------------------------------------------------------------------------------

  // 标题按文字对应:JupyterLab 的锚点是标题文字把空格换成 "-"
  function headingText(h) { return h.textContent.replace(/¶\s*$/, "").trim(); }
  function anchorOf(h) { return headingText(h).replace(/ /g, "-"); }
  function headings(root) { return Array.prototype.slice.call(root.querySelectorAll("h1,h2,h3,h4,h5,h6")); }

  function decode(s) { try { return decodeURIComponent(s); } catch (e) { return s; } }

  function findAnchor(layer, anchor) {
    return headings(layer).filter(function (x) { return anchorOf(x) === anchor; })[0];
  }

  function scrollToAnchor(layer, anchor) {
    fill(function () { return !findAnchor(layer, anchor); });
    var h = findAnchor(layer, anchor);
    // 标题下面也得有足够的内容,否则滚不到让标题贴顶的位置
    if (h) fill(function () { return layer.scrollHeight < h.offsetTop + layer.clientHeight * 2; });
    if (h) layer.scrollTop += h.getBoundingClientRect().top - layer.getBoundingClientRect().top - bar(layer);
  }

  function bar(layer) { var b = layer.querySelector(".cpv-bar"); return b ? b.offsetHeight : 0; }

  function links(root) {   // root:刚画好的一格
    var dir = path.lastIndexOf("/") >= 0 ? path.slice(0, path.lastIndexOf("/") + 1) : "";
    root.querySelectorAll("a[href]").forEach(function (a) {
      var href = a.getAttribute("href");
      if (/^[a-z][a-z0-9+.-]*:/i.test(href) || href.slice(0, 2) === "//") {
        a.target = "_blank";   // 与 JupyterLab 一样,外部链接在新标签页打开
        a.rel = "noopener";
        return;
      }
      if (href.charAt(0) === "#") {
        a.addEventListener("click", function (ev) {
          ev.preventDefault();
          scrollToAnchor(document.getElementById("course-preview"), decode(href.slice(1)));
        });
        return;
      }
      var u;
      try { u = new URL(href, "http://site/" + dir); } catch (e) { a.removeAttribute("href"); return; }
      var target = decode(u.pathname.slice(1));
      // 别的章节:静态阅读版的那一节(与 course-app.js 对 JupyterLab 里的链接做法相同)
      a.href = /\.ipynb$/i.test(target) ? "../" + encodeURI(target.replace(/\.ipynb$/i, ".html")) + u.hash : filesUrl(target);
    });
  }

  // ---- 交接给 JupyterLab -------------------------------------------------------------------------

  function appNotebook() { return document.querySelector(".jp-NotebookPanel .jp-Notebook"); }

  // 显示好的标准:保存了输出的 notebook 要等第一个输出出现,否则等第一格出现
  function appReady(hasOutputs) {
    var nb = appNotebook();
    return !!nb && !!nb.querySelector(hasOutputs ? ".jp-OutputArea-output" : ".jp-Cell");
  }

  function scroller(node) {
    for (var n = node && node.parentElement; n && n !== document.body; n = n.parentElement) {
      var oy = getComputedStyle(n).overflowY;
      if ((oy === "auto" || oy === "scroll") && n.scrollHeight > n.clientHeight) return n;
    }
    return null;
  }

  // 读者正在读的位置:覆盖页顶端那一格的序号,以及顶端落在这一格的几分之几处;没滚动过时为 null
  function readingAt(layer) {
    if (layer.scrollTop < 40) return null;
    var top = layer.getBoundingClientRect().top + bar(layer);
    var cells = layer.querySelectorAll(".cpv-cell");
    for (var i = 0; i < cells.length; i++) {
      var r = cells[i].getBoundingClientRect();
      if (r.bottom > top) return { index: cells[i].getAttribute("data-index"), fraction: Math.max(0, (top - r.top) / (r.height || 1)) };
    }
    return null;
  }

  function appCell(at) {
    var nb = appNotebook();
    return nb && nb.querySelector('.jp-Cell[data-windowed-list-index="' + at.index + '"]');
  }

  // JupyterLab 里那一格与读者刚才读到的位置差多少像素
  function gap(at, box) {
    var c = appCell(at);
    if (!c) return null;
    var r = c.getBoundingClientRect();
    return r.top + at.fraction * r.height - box.getBoundingClientRect().top;
  }

  // 把 JupyterLab 的那一格滚到读者刚才读到的位置;返回剩下的差距(下面的格还没画出时,可能滚不到)
  function place(at, box) {
    var d = gap(at, box);
    if (d === null) return null;
    if (Math.abs(d) > 1) box.scrollTop += d;
    return gap(at, box);
  }

  // 交接后上面的格还可能长高(输出、图片陆续画出),所以在 PIN_MS 内每帧校正一次;
  // 读者一滚动、按键或点击就停手。
  var PIN_MS = 2500;
  function pin(at, box) {
    var until = Date.now() + PIN_MS;
    var stop = function () { until = 0; };
    ["wheel", "touchstart", "keydown", "mousedown"].forEach(function (t) {
      window.addEventListener(t, stop, { capture: true, once: true });
    });
    (function frame() {
      if (Date.now() > until) return;
      place(at, box);
      requestAnimationFrame(frame);
    })();
  }

  function handOver(layer, hasOutputs, cellCount) {
    var readySince = 0;
    var done = false;

    function finish() {
      done = true;
      close(layer);
    }

    // 轮询而不是监听 DOM 变化:JupyterLab 启动时有成千上万次 DOM 变化,逐条记录反而拖慢它
    function check() {
      if (done) return;
      if (!appReady(hasOutputs)) return setTimeout(check, POLL_MS);
      if (!readySince) readySince = Date.now();
      var at = readingAt(layer);
      if (!at) return finish();
      var c = appCell(at);
      var box = scroller(c || appNotebook().querySelector(".jp-Cell"));
      var left = c && box ? place(at, box) : null;
      if (left !== null && Math.abs(left) <= 2) {
        pin(at, box);
        return finish();
      }
      // 那一格还没画,或它下面的格还没画、滚不到位(JupyterLab 从上往下陆续画出各格,开发机上全章约 3 秒):稍后再试;
      // 各格都画完了(或等得太久)就尽量靠近:找得到那一格就贴过去,找不到就按比例滚过去
      var all = appNotebook().querySelectorAll(".jp-Cell").length >= cellCount;
      if (!all && Date.now() - readySince < SYNC_GIVE_UP_MS) return setTimeout(check, POLL_MS);
      if (left !== null) pin(at, box);
      else if (box) box.scrollTop = box.scrollHeight * at.index / cellCount;
      finish();
    }

    setTimeout(check, POLL_MS);
  }

  // ---- 启动 -------------------------------------------------------------------------------------

  // 打开某一格来运行时的那行说明(见上):JupyterLab 画出第一格(或等得太久)就撤掉
  function opening() {
    var note = el("div", null, "正在打开可运行的 notebook，Python 随后在浏览器里启动…");
    note.id = "course-opening";
    note.setAttribute("role", "status");
    var since = Date.now();
    (function check() {
      var nb = appNotebook();
      if ((nb && nb.querySelector(".jp-Cell")) || Date.now() - since > SYNC_GIVE_UP_MS) return note.remove();
      if (document.body && !note.isConnected) {
        document.body.appendChild(note);
        if (window.performance && performance.mark) performance.mark("course-opening-shown");
      }
      setTimeout(check, POLL_MS);
    })();
  }

  var keyGuard = null;

  function close(layer) {
    if (keyGuard) window.removeEventListener("keydown", keyGuard, true);
    keyGuard = null;
    layer.remove();
    if (window.performance && performance.mark) performance.mark("course-preview-closed");
  }

  function show(nb) {
    var cells = nb.cells || [];
    if (!cells.length) return;   // 新建的空 notebook:没什么可预览的
    var hasOutputs = cells.some(function (c) { return c.outputs && c.outputs.length; });
    if (appReady(hasOutputs)) return;   // JupyterLab 已经先显示好了
    var layer = el("div");
    layer.id = "course-preview";
    layer.setAttribute("role", "document");
    layer.setAttribute("aria-label", "快速预览");
    layer.tabIndex = -1;
    var note = el("div", "cpv-bar", "快速预览：阅读界面加载完成后会自动切换，可以先往下读。");
    note.setAttribute("role", "status");
    var button = note.appendChild(el("button", "cpv-close", "关闭预览"));
    button.type = "button";
    button.addEventListener("click", function () { close(layer); });
    layer.appendChild(note);
    var main = layer.appendChild(el("div", "cpv-notebook"));
    try {
      document.body.appendChild(layer);
      handOver(layer, hasOutputs, cells.length);
      fill = filler(layer, main, cells);
      if (location.hash) scrollToAnchor(layer, decode(location.hash.slice(1)));
      else fill();
      layer.addEventListener("scroll", function () {
        try { fill(); } catch (e) { warn("没能接着显示下面的格", e); }
      }, { passive: true });
      // 键盘留在预览里:按键不能落到底下还看不见的 notebook 上(命令模式的 d d、x 会改动它)
      layer.focus({ preventScroll: true });
      keyGuard = function (ev) {
        if (layer.contains(ev.target)) return;
        ev.stopPropagation();
        layer.focus({ preventScroll: true });
      };
      window.addEventListener("keydown", keyGuard, true);
    } catch (e) {
      warn("快速预览出错，已移除", e);
      close(layer);
    }
  }

  // 读者的副本:notebook 的 content 是对象;用文本编辑器存过的是 JSON 字符串
  function savedNotebook(model) {
    var content = model && model.content;
    if (typeof content === "string") {
      try { content = JSON.parse(content); } catch (e) { return null; }
    }
    return content && Array.isArray(content.cells) ? content : null;
  }

  var shown = null;
  try {
    var deployed = fetch(filesUrl(path), { priority: "high" }).then(function (r) {
      if (!r.ok) throw new Error("HTTP " + r.status + " for " + r.url);
      return r.json();
    });
    deployed.catch(function () {});
    var dom = new Promise(function (ok) {
      if (document.body) ok();
      else document.addEventListener("DOMContentLoaded", ok);
    });
    // 本脚本排在页面最前,好让 notebook 先于 JupyterLab 的几十个脚本开始下载;
    // 存储脚本(course-storage.js)排在后面,所以到 DOMContentLoaded 时再问它
    var notebook = dom.then(function () {
      return window.courseSavedFile ? window.courseSavedFile(path) : null;
    }).then(function (model) {
      return savedNotebook(model) || deployed;
    });
    // 页面让 JupyterLab 等预览先显示出来(最多 START_WAIT_MS):两者抢同一个主线程,JupyterLab 一旦开始
    // 执行,预览就要等它的长任务间隙
    window.coursePreviewReady = new Promise(function (ok) { shown = ok; setTimeout(ok, START_WAIT_MS); });
    Promise.all([notebook, loadScript(MARKED), dom]).then(function (r) { show(r[0]); })
      .catch(function (e) { warn("没能显示快速预览（照常等待阅读界面）", e); })
      .then(function () {
        // 等预览画到屏幕上(下一帧之后)再放 JupyterLab 启动;这一刻记为 course-preview-shown,供 bench 读
        requestAnimationFrame(function () {
          setTimeout(function () {
            if (document.getElementById("course-preview") && window.performance && performance.mark) {
              performance.mark("course-preview-shown");
            }
            shown();
          }, 0);
        });
      });
  } catch (e) {
    if (shown) shown();
    warn("没能显示快速预览（照常等待阅读界面）", e);
  }
})();
