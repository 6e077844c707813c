// 运行版的几处调整:课程自己的 JupyterLab 插件。构建时(sitebuild/extension.py)把本文件原样放进一个预构建的
// federated 扩展,`jupyter lite build` 像别的扩展一样把它登记进 jupyter-lite.json 的 federated_extensions;
// JupyterLab 启动时加载它(本文件末尾的容器),在激活各插件时调用 activate(app)。插件只用 app 本身
// (docRegistry、commands、shell、serviceManager),不依赖任何共享模块,所以不用打包工具,也不用 Node.js。
// 任何出错只记到控制台,页面照常启动(行为同未调整时)。
//
// 1. 内核在页面显示出 notebook 之后才启动。JupyterLab 打开 notebook 时默认马上启动内核,和页面渲染抢
//    CPU。这里让「打开文件」不启动内核(shouldStart: false),并打开 autoStartDefault(读者运行单元格时
//    直接启动默认内核,不弹出「选择内核」对话框);有 lite 单元格的 notebook 显示出来、快速预览交接完之后,
//    再在后台启动内核(见 6):读者来运行版就是为了运行,读到想动手的那一格时内核多半已经好了。
// 2. 不等工作区保存。路由先执行 apputils:load-statedb:它读出保存的工作区后,还要等一次防抖保存
//    (每次状态变化再推迟 500 ms),启动时这要空等约 1 秒,之后才打开 URL 里的 notebook。这里让
//    这条命令在工作区读出后就算完成;保存照常在后台进行。带 ?clone / ?reset 的地址不受影响。
// 3. 需要 JAX 的课程单元格不运行(浏览器里没有 JAX):保存的输出原样留着,旁边显示一行中文说明,
//    指向本节最近的 lite 单元格(点一下就滚到那一格),并附 Colab 和本地运行的链接。构建时暂存副本
//    给这些单元格标了 metadata.course.browser = "needs-jax";读者自己新建的单元格照常运行。
// 4. 读者的副本:读者在本浏览器里保存过改了源码的某一章时,notebook 顶部标明「这是你的副本」,
//    「恢复原版」把副本另存为「(我的副本 日期)」后重新打开课程原版,什么都不丢。
// 5. 链接:指向别的章节的链接在同一个标签页里打开静态阅读版的对应小节;本章内的 #小节 链接
//    滚到那一格;地址里的 #cell-<id>(阅读版的「在浏览器里运行」)打开时滚到那个单元格。
// 6. 后台启动内核:notebook 显示出来、预览交接完、页面空闲时启动 Pyodide 内核(省流量模式下不启动);
//    从阅读版的「在浏览器里运行」打开某一格(#cell-<id>)时读者就是要运行:会话一就绪就启动,不等空闲,
//    而且内核起来之前不让 JupyterLab 在空闲时画屏幕外的单元格(见 holdOffscreenCells);
//    内核准备好之前的运行请求先等它(见 kernelUp)。代价:打开运行版就下载约 21 MB(之后浏览器缓存),
//    在 Web Worker 里初始化几秒 CPU,多占一两百 MB 内存。
(function () {
  "use strict";
  var CONFIG = /*CONFIG*/null;
  var app = null;

  function warn(what, e) {
    console.warn("course-app: 没能" + what + "（照 JupyterLab 默认行为运行）：", e);
  }

  function kernelOnDemand(registry) {
    if (!registry || typeof registry.getKernelPreference !== "function") return;
    var original = registry.getKernelPreference.bind(registry);
    registry.getKernelPreference = function (path, widgetName, kernel) {
      var pref = original(path, widgetName, kernel);
      // only plain opens: a caller that names a kernel (launcher, "new notebook") keeps its choice
      if (pref && !kernel && pref.canStart !== false) {
        pref.shouldStart = false;
        pref.autoStartDefault = true;
      }
      return pref;
    };
  }

  function noWaitForSave(commands, workspaces) {
    if (!commands || !workspaces || typeof workspaces.fetch !== "function") return;
    var fetching = null;
    var fetch = workspaces.fetch.bind(workspaces);
    workspaces.fetch = function (id) {
      var p = fetch(id);
      fetching = p;
      return p;
    };
    var execute = commands.execute.bind(commands);
    commands.execute = function (id, args) {
      fetching = null;
      var done = execute(id, args);
      var search = (args && args.search) || "";
      if (id !== "apputils:load-statedb" || !fetching || /[?&](clone|reset)\b/.test(search)) return done;
      // the command resolves the state database right after this fetch settles; a timer tick later it is ready
      var loaded = fetching.then(tick, tick);
      return Promise.race([done, loaded]);
    };
  }

  function tick() {
    return new Promise(function (ok) { setTimeout(ok, 0); });
  }

  // ---- 3. 需要 JAX 的单元格不运行 ----
  var RUN_SELECTED = {
    "notebook:run-cell": "stay", "notebook:run-cell-and-select-next": "next",
    "notebook:run-cell-and-insert-below": "insert"
  };
  var RUN_RANGE = {
    "notebook:run-all-cells": "all", "notebook:restart-run-all": "all", "notebook:run-all-above": "above",
    "notebook:run-all-below": "below", "notebook:restart-and-run-to-selected": "to-selected"
  };

  function currentNotebook() {
    var w = app && app.shell && app.shell.currentWidget;
    return w && w.content && w.content.widgets && w.context ? w : null;
  }

  function needsJax(cell) {
    if (!cell || !cell.model || cell.model.type !== "code") return false;
    var meta = cell.model.getMetadata ? cell.model.getMetadata("course") : null;
    return !!(meta && meta.browser === "needs-jax");
  }

  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text) e.textContent = text;
    return e;
  }

  function link(href, text) {
    var a = el("a", "", text);
    a.href = href;
    a.target = "_blank";
    a.rel = "noopener";
    return a;
  }

  function isLite(cell) {
    var tags = (cell.model.getMetadata && cell.model.getMetadata("tags")) || [];
    return cell.model.type === "code" && tags.indexOf("lite") >= 0;
  }

  // 每章的准备单元格(第一个代码格,导入 jaxcourse)也标了 lite,但它不是「动手」的那种格
  function isSetup(nb, i) {
    for (var k = 0; k < nb.widgets.length; k++) {
      if (nb.widgets[k].model.type === "code") {
        return k === i && /^\s*import jaxcourse\s*$/m.test(nb.widgets[k].model.sharedModel.getSource());
      }
    }
    return false;
  }

  function headingOf(cell) {
    if (cell.model.type !== "markdown") return null;
    var m = /^(#{1,3}) +(.+?)\s*$/m.exec(cell.model.sharedModel.getSource());
    return m ? m[2].replace(/`/g, "").replace(/\*\*/g, "") : null;
  }

  // 离第 i 格最近的 lite 单元格:本节(两个 ≤ 3 级标题之间)里先找它下面的第一个,再找上面最后一个;
  // 本节没有就找全章最近的一个。返回 {index, inSection, section}(section:那一格所在小节的标题)或 null
  function nearestLite(nb, i) {
    var cells = nb.widgets, start = 0, end = cells.length;
    for (var k = i; k >= 0; k--) if (headingOf(cells[k]) !== null) { start = k; break; }
    for (k = i + 1; k < cells.length; k++) if (headingOf(cells[k]) !== null) { end = k; break; }
    var ok = function (k) { return isLite(cells[k]) && !isSetup(nb, k); };
    for (k = i + 1; k < end; k++) if (ok(k)) return { index: k, inSection: true };
    for (k = i - 1; k >= start; k--) if (ok(k)) return { index: k, inSection: true };
    for (var d = 1; d < cells.length; d++) {
      var hit = [i + d, i - d].filter(function (j) { return j >= 0 && j < cells.length && ok(j); })[0];
      if (hit !== undefined) {
        var title = null;
        for (k = hit; k >= 0 && title === null; k--) title = headingOf(cells[k]);
        return { index: hit, inSection: false, section: title };
      }
    }
    return null;
  }

  // 一格 lite 单元格的简短说明:它第一行中文注释(去掉「试一试」),否则第一行不是 import 的代码
  function liteLabel(cell) {
    var lines = cell.model.sharedModel.getSource().split("\n").map(function (l) { return l.trim(); });
    var label = lines.filter(function (l) { return /^#\s*\S/.test(l) && !/^#\s*试一试/.test(l); })[0];
    label = label ? label.replace(/^#\s*/, "") : lines.filter(function (l) {
      return l && !/^(import |from \S+ import |mnp = )/.test(l) && l.charAt(0) !== "#";
    })[0] || lines[0] || "";
    return label.length > 40 ? label.slice(0, 39) + "…" : label;
  }

  function liteLink(nb, from, to) {
    var target = nb.widgets[to];
    var a = el("a", "course-lite-link", "「" + liteLabel(target) + "」");
    a.href = "#cell-" + target.model.id;
    a.title = "滚到那一格并选中它，按 Shift+Enter 运行";
    a.setAttribute("data-index", String(to));
    a.addEventListener("click", function (e) {
      e.preventDefault();
      e.stopPropagation();
      var now = nb.widgets.indexOf(target);   // cells may have moved since the note was written
      if (now < 0) return;
      scrollToIndex(nb, now);
      nb.mode = "command";
      target.node.classList.add("course-flash");
      setTimeout(function () { target.node.classList.remove("course-flash"); }, 1600);
    });
    return a;
  }

  function pointToLite(note, nb, i) {
    var hit = nearestLite(nb, i);
    if (!hit) return;
    var n = Math.abs(hit.index - i), where = hit.index > i ? "下面" : "上面";
    var p = el("div", "course-lite-hint");
    if (hit.inSection) {
      p.appendChild(document.createTextNode("本节可以在浏览器里动手的是" + where + "第 " + n + " 格（纯 Python，用迷你 JAX）："));
    } else {
      p.appendChild(document.createTextNode("本节没有能在浏览器里运行的单元格；离这里最近的是" + where + "第 " + n + " 格" +
        (hit.section ? "（在「" + hit.section + "」一节）" : "") + "："));
    }
    p.appendChild(liteLink(nb, i, hit.index));
    p.appendChild(document.createTextNode("，点一下就滚到那一格。"));
    note.appendChild(p);
  }

  function noteOn(cell, path, nb) {
    var old = cell.node.querySelector(".course-jax-note");
    if (old) old.remove();
    var note = el("div", "course-jax-note");
    note.setAttribute("role", "note");
    note.appendChild(el("b", "", "这一格没有运行："));
    note.appendChild(document.createTextNode("它需要 JAX，浏览器里没有 JAX。下面保存的输出来自真实的 JAX 0.12.0.1，保持原样。"));
    if (nb) pointToLite(note, nb, nb.widgets.indexOf(cell));
    var run = el("div", "course-run-elsewhere");
    run.appendChild(document.createTextNode("想真正运行这一格："));
    run.appendChild(link(CONFIG.colab + encodeURI(path), "在 Colab 中打开本章"));
    run.appendChild(document.createTextNode("，或"));
    run.appendChild(link(CONFIG.local, "在自己的电脑上运行"));
    run.appendChild(document.createTextNode("。"));
    note.appendChild(run);
    cell.node.appendChild(note);
  }

  // 内核还在启动时就发出的运行请求会丢:JupyterLite 在启动中换掉内核的连接,第一条执行请求没有回音,
  // 单元格不运行也不报错(读者第一次按 Shift+Enter 时正是这样)。所以先等内核起来(回答了 kernel_info),
  // 再交给 JupyterLab 运行;没有内核时这里就启动它(和 JupyterLab 自己启动的是同一个默认内核),但要等
  // 会话初始化完:初始化结束时它会接上已有的会话,又换一次连接。
  function sleep(ms) {
    return new Promise(function (ok) { setTimeout(ok, ms); });
  }

  async function kernelUp(panel) {
    var ctx = panel.sessionContext;
    try {
      await ctx.ready;
      if (panel.__courseStarting) await panel.__courseStarting;
      if (!(ctx.session && ctx.session.kernel) && ctx.hasNoKernel !== false) await ctx.startKernel();
      for (var n = 0; n < 240; n++) {   // at most 2 minutes; the connection may be replaced meanwhile
        var k = ctx.session && ctx.session.kernel;
        if (!k || !k.info) return;
        var up = await Promise.race([k.info.then(function () { return true; }), sleep(500).then(function () { return false; })]);
        if (up) return;
      }
    } catch (e) {
      warn("等内核启动", e);   // JupyterLab then starts it (or says why not) as usual
    }
  }

  async function runOnly(nb, cells, execute) {
    for (var i = 0; i < cells.length; i++) {
      nb.deselectAll();
      nb.activeCellIndex = nb.widgets.indexOf(cells[i]);
      await execute("notebook:run-cell", {});
    }
  }

  async function guardedRun(id, args, execute) {
    var panel = currentNotebook(), nb = panel && panel.content;
    if (!nb) return execute(id, args);
    var widgets = nb.widgets, active = nb.activeCellIndex, chosen;
    if (RUN_SELECTED[id]) {
      chosen = widgets.filter(function (c) { return nb.isSelectedOrActive(c); });
    } else {
      var mode = RUN_RANGE[id];
      chosen = widgets.filter(function (c, i) {
        return mode === "all" || (mode === "above" && i < active) || (mode === "below" && i >= active) ||
               (mode === "to-selected" && i <= active);
      });
    }
    if (!chosen.some(needsJax)) {
      startingNote(panel);
      await kernelUp(panel);
      return execute(id, args);
    }
    var last = widgets.indexOf(chosen[chosen.length - 1]);
    var skipped = chosen.filter(needsJax);
    // 运行一段(运行全部……)时跳过的格一多,逐格的说明会淹没页面:改成运行完后的一条汇总
    var summarize = !RUN_SELECTED[id] && skipped.length > 1;
    if (!summarize) skipped.forEach(function (c) { noteOn(c, panel.context.path, nb); });
    var runnable = chosen.filter(function (c) {
      return !needsJax(c) && (RUN_SELECTED[id] || c.model.type === "code");
    });
    if (runnable.some(function (c) { return c.model.type === "code"; })) {
      startingNote(panel);
      await kernelUp(panel);
    }
    await runOnly(nb, runnable, execute);
    if (summarize) runSummary(panel.context.path, runnable.filter(function (c) { return c.model.type === "code"; }).length,
                              skipped.length);
    nb.deselectAll();
    if (RUN_SELECTED[id] === "next") nb.activeCellIndex = Math.min(last + 1, widgets.length - 1);
    else if (RUN_SELECTED[id] === "insert") { nb.activeCellIndex = last; await execute("notebook:insert-cell-below", {}); }
    else nb.activeCellIndex = RUN_SELECTED[id] ? last : active;
  }

  function runSummary(path, ran, skipped) {
    var old = document.getElementById("course-run-summary");
    if (old) old.remove();
    var box = el("div", "course-toast course-run-summary");
    box.id = "course-run-summary";
    box.setAttribute("role", "status");
    box.appendChild(el("b", "", "运行完了。"));
    box.appendChild(document.createTextNode("运行了 " + ran + " 个纯 Python 单元格；" + skipped +
      " 个需要 JAX 的单元格没有运行（浏览器里没有 JAX），它们保存的输出来自真实的 JAX 0.12.0.1，保持原样。想全部真正运行："));
    box.appendChild(link(CONFIG.colab + encodeURI(path), "在 Colab 中打开本章"));
    box.appendChild(document.createTextNode("，或"));
    box.appendChild(link(CONFIG.local, "在自己的电脑上运行"));
    box.appendChild(document.createTextNode("。"));
    var ok = el("button", "course-restore", "知道了");
    ok.type = "button";
    ok.onclick = function () { box.remove(); };
    box.appendChild(ok);
    document.body.appendChild(box);
  }

  function guardRuns(commands) {
    var execute = commands.execute.bind(commands);
    commands.execute = function (id, args) {
      if (!RUN_SELECTED[id] && !RUN_RANGE[id]) return execute(id, args);
      return guardedRun(id, args, execute);
    };
  }

  // 内核还没准备好(没启动,或后台启动还没完成)时读者运行单元格:说一声,别让读者只看到 [*]
  function kernelReady(ctx) {
    var k = ctx && ctx.session && ctx.session.kernel;
    return !!(k && (k.status === "idle" || k.status === "busy") && ctx.isReady !== false);
  }

  function startingNote(panel) {
    var ctx = panel && panel.sessionContext;
    if (!ctx || kernelReady(ctx) || document.getElementById("course-starting")) return;
    var box = el("div", "course-toast", "正在浏览器里启动 Python（Pyodide），第一次要几秒钟，之后运行就快了…");
    box.id = "course-starting";
    box.setAttribute("role", "status");
    document.body.appendChild(box);
    var done = function (_, status) {
      if (status === "idle" || status === "dead") {
        box.remove();
        ctx.statusChanged.disconnect(done);
      }
    };
    ctx.statusChanged.connect(done);
    setTimeout(function () { box.remove(); }, 90000);
  }

  // ---- 6. 后台启动内核 ----
  function idle(fn) {
    if (window.requestIdleCallback) window.requestIdleCallback(fn, { timeout: 1500 });
    else setTimeout(fn, 200);
  }

  // 为运行某一格而打开时(#cell-…),JupyterLab 在空闲时把还没画的单元格从上往下逐个画出来、接进页面(每格建一个
  // 编辑器,第一章要 1 s 以上的主线程时间),在两个核的机器上正好与内核启动(另一个线程)抢 CPU,输出晚出来约
  // 0.6 s。所以先停下,内核起来(或启动失败、15 秒后)再接着画。停着的时候 notebook 只接到已经画好的那几格为止:
  // 读者一往下翻(滚轮、触摸滑动、翻页键、拖滚动条)就接着画;点进单元格去运行不算
  var SCROLL_KEYS = ["PageDown", "PageUp", "End", "Home", "ArrowDown", "ArrowUp", " "];
  function holdOffscreenCells(panel) {
    var nb = panel.content, ctx = panel.sessionContext, released = false;
    if (typeof nb._scheduleCellRenderOnIdle !== "function") return function () {};   // JupyterLab changed: no hold
    var onInput = function (e) {
      if (e.type === "keydown" && SCROLL_KEYS.indexOf(e.key) < 0) return;
      if (e.type === "mousedown" && e.target.closest(".jp-Cell")) return;   // a click into a cell, not the scrollbar
      release();
    };
    var EVENTS = ["wheel", "touchmove", "keydown", "mousedown"];
    var release = function () {
      if (released) return;
      released = true;
      performance.mark("course-cells-released");
      EVENTS.forEach(function (ev) { nb.node.removeEventListener(ev, onInput, true); });
      delete nb._scheduleCellRenderOnIdle;   // the class's own again
      if (!nb.isDisposed) nb._scheduleCellRenderOnIdle();
    };
    if (nb._idleCallBack) { window.cancelIdleCallback(nb._idleCallBack); nb._idleCallBack = null; }
    nb._scheduleCellRenderOnIdle = function () {};
    performance.mark("course-cells-held");
    ctx.statusChanged.connect(function (_, status) { if (status === "idle" || status === "dead") release(); });
    EVENTS.forEach(function (ev) { nb.node.addEventListener(ev, onInput, { passive: true, capture: true }); });
    setTimeout(release, 15000);
    return release;
  }

  function startInBackground(panel) {
    var ctx = panel.sessionContext, nb = panel.content;
    if (!ctx || typeof ctx.startKernel !== "function" || !nb.widgets.some(isLite)) return;
    if (navigator.connection && navigator.connection.saveData) return;   // 省流量模式:等读者运行时再下载
    var release = /^#cell-/.test(location.hash) ? holdOffscreenCells(panel) : function () {};
    var tries = 0;
    var go = function () {
      if (ctx.isDisposed || (ctx.session && ctx.session.kernel)) return;
      // wait for the quick preview to hand over and for the page to be shown: the start then takes no
      // CPU from the first screen
      if ((document.getElementById("course-preview") || document.visibilityState !== "visible") && tries++ < 600) {
        setTimeout(go, 100);
        return;
      }
      // opened to run one cell: start now (waiting for an idle page cost 0.1–0.3 s of the reader's wait)
      (/^#cell-/.test(location.hash) ? function (fn) { fn(); } : idle)(function () {
        // a run by the reader may have started one already (JupyterLab then has a pending kernel name)
        if (ctx.isDisposed || (ctx.session && ctx.session.kernel) || ctx.hasNoKernel === false) return;
        performance.mark("course-kernel-start");
        panel.__courseStarting = ctx.startKernel().catch(function (e) { release(); warn("在后台启动内核", e); })
          .then(function () { panel.__courseStarting = null; });
      });
    };
    ctx.ready.then(go, function (e) { release(); warn("在后台启动内核", e); });
  }

  // ---- 4. 读者的副本 ----
  // 只运行过单元格、被自动保存过的章节不算副本:某个单元格的源码和课程原版不同,才是读者改过的版本
  function sourcesOf(nb) {
    if (typeof nb === "string") { try { nb = JSON.parse(nb); } catch (e) { return null; } }
    return JSON.stringify(((nb && nb.cells) || []).map(function (c) {
      return [c.cell_type, Array.isArray(c.source) ? c.source.join("") : String(c.source || "")];
    }));
  }

  function editedCopy(path, saved) {
    if (!saved) return null;
    var url = siteRoot() + "files/" + path.split("/").map(encodeURIComponent).join("/");
    return fetch(url).then(function (r) { return r.ok ? r.json() : null; }).then(function (original) {
      return original && sourcesOf(original) === sourcesOf(saved.content) ? null : saved;
    }, function () { return saved; });
  }

  function copyBanner(panel) {
    var path = panel.context.path;
    if (!window.courseSavedFile || !window.courseIsDeployed || !window.courseIsDeployed(path)) return;
    window.courseSavedFile(path).then(function (saved) { return editedCopy(path, saved); }).then(function (saved) {
      var old = document.querySelector(".course-copy-banner");
      if (old) old.remove();
      var restored = sessionStorage.getItem("course-restored:" + path);
      if (!saved && !restored) return;
      var bar = el("div", "course-copy-banner");
      bar.setAttribute("role", "status");
      if (saved) {
        bar.appendChild(el("b", "", "这是你的副本。"));
        bar.appendChild(document.createTextNode(
          "你在这个浏览器里保存过对本章的修改（只存在这台设备的浏览器里），所以这里显示的是你的版本，不是课程原版。"));
        var btn = el("button", "course-restore", "恢复原版");
        btn.type = "button";
        btn.title = "把你的版本另存为「<原名>(我的副本 日期)」，再重新打开课程原版";
        btn.onclick = function () {
          btn.disabled = true;
          window.courseRestoreOriginal(path).then(function (copy) {
            sessionStorage.setItem("course-restored:" + path, copy);
            panel.context.model.dirty = false;
            location.reload();
          }, function (e) { btn.disabled = false; warn("恢复原版", e); });
        };
        bar.appendChild(btn);
        bar.appendChild(el("span", "course-hint", "（你的修改会另存为一个副本，不会丢）"));
      } else {
        sessionStorage.removeItem("course-restored:" + path);
        bar.appendChild(el("b", "", "已恢复课程原版。"));
        bar.appendChild(document.createTextNode("你的修改另存在：" + restored + "（在「文件 › 打开」里能找到）。"));
      }
      bar.setAttribute("data-path", path);
      document.body.appendChild(bar);   // fixed at the bottom: the panel's own layout stays untouched
    });
  }

  // ---- 5. 链接与定位 ----
  function siteRoot() {
    var p = location.pathname, i = p.lastIndexOf("/notebooks/");
    return i >= 0 ? p.slice(0, i + 1) : "/";
  }

  function headingAnchors(source) {
    var out = [];
    source.split("\n").forEach(function (line) {
      var m = /^#{1,6} +(.+?)\s*$/.exec(line);
      if (m) out.push(m[1].replace(/\[([^\]]+)\]\([^)\s]+\)/g, "$1").replace(/`/g, "").replace(/\*\*/g, "").trim().replace(/ /g, "-"));
    });
    return out;
  }

  function scrollToIndex(nb, i) {
    nb.activeCellIndex = i;
    nb.deselectAll();
    var cell = nb.widgets[i];
    // 已经画出来的单元格按它在页面上的真位置滚（scrollToItem 按估计的高度算，content-visibility 下差出几百像素）；
    // 还没画出来的先用 scrollToItem 让它进入视口、被画出来
    if (cell && cell.node.isConnected && cell.node.getBoundingClientRect().height > 0) cell.node.scrollIntoView({ block: "start" });
    else if (typeof nb.scrollToItem === "function") nb.scrollToItem(i, "start");
    else if (cell) cell.node.scrollIntoView({ block: "start" });
  }

  // 打开时上方的单元格还在渐次渲染（JupyterLab 先按估计的高度排版，渲染好了再换成真高度），目标单元格会被一点点
  // 挤下去（阅读版「在浏览器里运行」打开后它落在屏幕下方，运行后输出在屏幕外）。它渲染出来以后的 seconds 秒里，
  // 一离开顶部就滚回来（还没渲染时也滚，让它先被渲染；content-visibility 下上方的单元格靠近视口才渲染，要跟一阵）；读者一动（滚轮、触摸、按键、点击）就不再管；最多管 40 秒
  function keepAtTop(nb, i, seconds) {
    var start = Date.now(), shownAt = 0, quit = false, host = nb.node;
    var stop = function () { quit = true; };
    ["wheel", "touchstart", "keydown", "mousedown"].forEach(function (ev) {
      host.addEventListener(ev, stop, { once: true, passive: true, capture: true });
    });
    (function tick() {
      var cell = nb.widgets[i], now = Date.now();
      if (quit || !cell || now - start > 40000 || (shownAt && now - shownAt > seconds * 1000)) return;
      var r = cell.node.getBoundingClientRect();
      if (r.height > 0 && cell.node.isConnected && !shownAt) shownAt = now;
      if (!shownAt || Math.abs(r.top - host.getBoundingClientRect().top) > 12) scrollToIndex(nb, i);
      setTimeout(tick, 120);
    })();
  }

  function goTo(nb, frag, settle) {
    var target = decodeURIComponent(frag);
    var byId = /^cell-(.+)$/.exec(target);
    for (var i = 0; i < nb.widgets.length; i++) {
      var m = nb.widgets[i].model;
      if (byId ? m.id === byId[1] : (m.type === "markdown" && headingAnchors(m.sharedModel.getSource()).indexOf(target) >= 0)) {
        scrollToIndex(nb, i);
        if (settle) keepAtTop(nb, i, settle);
        return true;
      }
    }
    return false;
  }

  function onLinkClick(e) {
    var a = e.target && e.target.closest && e.target.closest(".jp-RenderedHTMLCommon a[href]");
    if (!a || e.button !== 0 || e.ctrlKey || e.metaKey || e.shiftKey) return;
    var href = a.getAttribute("href") || "", panel = currentNotebook();
    if (href.charAt(0) === "#") {
      if (panel && goTo(panel.content, href.slice(1))) { e.preventDefault(); e.stopPropagation(); }
      return;
    }
    var url = new URL(a.href, location.href);
    var m = /\/files\/(.+\.ipynb)$/.exec(url.pathname) || (url.origin === location.origin && /(?:^|\/)([^/]+\/[^/]+\.ipynb)$/.exec(url.pathname));
    if (!m) return;
    e.preventDefault();
    e.stopPropagation();
    location.href = siteRoot() + m[1].replace(/\.ipynb$/, ".html") + url.hash;
  }

  // 能在浏览器里运行的单元格(标签 lite)标上「纯 Python · 可运行」,与阅读版的叫法一致
  function markLiteCells(nb) {
    nb.widgets.forEach(function (cell) { cell.node.classList.toggle("course-lite", isLite(cell)); });
  }

  // 左上角的 JupyterLite 标志本来打开文件列表(新标签页);改成回到这一章的阅读版
  function backToReading(path, tries) {
    var logo = document.querySelector("a#jp-NotebookLogo, #jp-NotebookLogo a, #jp-top-panel a[href*='tree']");
    if (!/\.ipynb$/.test(path)) return;
    if (!logo) {   // 顶栏有时比笔记本晚画出来：稍等再试
      if ((tries || 0) < 40) setTimeout(function () { backToReading(path, (tries || 0) + 1); }, 250);
      return;
    }
    logo.href = siteRoot() + encodeURI(path.replace(/\.ipynb$/, ".html"));
    logo.target = "_self";
    logo.title = "回到本章的阅读版";
    logo.setAttribute("aria-label", "回到本章的阅读版");
  }

  // 「上一检查点」只在读者自己建过检查点(Ctrl+S、保存按钮)以后显示。自动保存第一次把课程文件存进浏览器时,
  // JupyterLite 先把原版存成一个检查点,时间是站点发布的时间:那时显示出来的「上一检查点：28 分钟前」对读者
  // 没有意义。所以课程文件要有第二个检查点才算;读者自己新建的文件,第一个检查点就是读者建的。
  function markCheckpoint(panel) {
    var ctx = panel.context;
    // the indicator lists the checkpoints again 500 ms after a save (Ctrl+S adds its checkpoint after the save):
    // decide again whenever its text changes, from the same list
    var shown = document.querySelector(".jp-NotebookCheckpoint");
    if (shown && !shown.__course) {
      shown.__course = true;
      new MutationObserver(function () { var p = currentNotebook(); if (p) markCheckpoint(p); })
        .observe(shown, { childList: true, characterData: true, subtree: true });
    }
    ctx.listCheckpoints().then(function (list) {
      var course = window.courseIsDeployed ? window.courseIsDeployed(ctx.path) : true;
      document.body.classList.toggle("course-saved", (list || []).length > (course ? 1 : 0));
    }, function (e) { warn("读检查点", e); });
  }

  function onNotebook(panel) {
    if (!panel || panel.__course) return;
    panel.__course = true;
    panel.context.ready.then(function () {
      copyBanner(panel);
      markLiteCells(panel.content);
      panel.content.model && panel.content.model.cells.changed.connect(function () { markLiteCells(panel.content); });
      backToReading(panel.context.path);
      startInBackground(panel);
      markCheckpoint(panel);
      panel.context.saveState.connect(function (_, state) {
        if (state !== "completed") return;
        markCheckpoint(panel);
        copyBanner(panel);
      });
      var frag = location.hash.slice(1);
      if (frag) setTimeout(function () { goTo(panel.content, frag, 20); }, 0);
    });
  }

  // 语言包没覆盖的界面文字(有的组件不经翻译器,直接写死英文):按原文逐字替换,单元格里的内容不动
  var ZH = {
    "No Kernel": "未启动内核", "Download": "下载", "Clear Browser Data": "清除浏览器数据（删掉本站保存的所有修改）",
    "More commands": "更多命令", "Click to open kernel logs": "点击查看内核日志", "Skip to Main": "跳到正文",
    "Table of Contents": "目录", "Close and Shut Down Notebook…": "关闭并停止 Notebook…", "Cell Type": "单元格类型",
    "Select Last Modified Cell": "选中最后修改的单元格", "Select Next Modified Cell": "选中下一个修改过的单元格",
    "折叠 left 侧面板": "折叠左侧面板", "折叠 right 侧面板": "折叠右侧面板",
    "展开 left 侧面板": "展开左侧面板", "展开 right 侧面板": "展开右侧面板",
    "main area toolbar": "主工具栏", "main area content": "主内容区", "Cells": "单元格",
    "Responsive popup toolbar": "弹出工具栏",
    "Copy Selected Text": "复制选中的文字", "Cut Selected Text": "剪切选中的文字", "Paste Text": "粘贴文字",
    "Delete the cell": "删除这个单元格", "Create a duplicate of this cell below": "在下面复制一份这个单元格",
    "Move this cell up": "上移这个单元格", "Move this cell down": "下移这个单元格",
    "Insert a cell above": "在上面插入单元格", "Insert a cell below": "在下面插入单元格",
    "Collapse Output": "折叠输出", "Expand Output": "展开输出", "Collapse Input": "折叠代码",
    "Expand Input": "展开代码", "Markdown Cell Content": "Markdown 单元格内容", "Code Cell Content": "代码单元格内容",
    "Cell toolbar": "单元格工具栏",
    // the kernel starts in the background (6), so its name and states show up in the toolbar right away
    "Python (Pyodide)": "Python（Pyodide）", "Kernel Connecting": "内核连接中", "Kernel Starting": "内核启动中",
    "Kernel Initializing": "内核初始化中", "Kernel Idle": "内核空闲", "Kernel Busy": "内核忙碌",
    "Kernel Unknown": "内核状态未知", "Kernel Restarting": "内核重启中", "Kernel Autorestarting": "内核自动重启中",
    "Kernel Dead": "内核已停止", "Kernel Disconnected": "内核已断开", "Kernel Terminating": "内核关闭中",
    "Python (WASM) Kernel": "Python（WASM）内核"   // the kernel's help link (帮助 menu), once it has started
  };
  var ATTRS = ["title", "aria-label"];
  // the course's own text (sources and outputs) is never touched; cell toolbars and collapsers are UI
  var CONTENT = ".jp-InputArea-editor, .jp-OutputArea-output, .jp-MarkdownOutput, .jp-RenderedHTMLCommon, #course-preview";

  function translateAttrs(e) {
    ATTRS.forEach(function (a) {
      var v = e.getAttribute && e.getAttribute(a);
      if (v && ZH[v]) e.setAttribute(a, ZH[v]);
    });
  }

  function translateNode(node) {
    if (node.nodeType === 3) {
      var t = node.nodeValue.trim();
      if (ZH[t] && !(node.parentElement && node.parentElement.closest(CONTENT))) node.nodeValue = ZH[t];
      return;
    }
    if (node.nodeType !== 1 || node.closest(CONTENT)) return;
    translateAttrs(node);
    if (/^About (.+)$/.test(node.textContent) && node.childElementCount === 0) node.textContent = node.textContent.replace(/^About /, "关于 ");
    var walker = document.createTreeWalker(node, NodeFilter.SHOW_TEXT | NodeFilter.SHOW_ELEMENT);
    var n;
    while ((n = walker.nextNode())) {
      if (n.nodeType === 1) {
        if (n.closest(CONTENT)) continue;
        translateAttrs(n);
        if (n.childElementCount === 0 && /^About .+/.test(n.textContent)) n.textContent = n.textContent.replace(/^About /, "关于 ");
      } else if (ZH[n.nodeValue.trim()] && !(n.parentElement && n.parentElement.closest(CONTENT))) {
        n.nodeValue = ZH[n.nodeValue.trim()];
      }
    }
  }

  function translateLeftovers() {
    translateNode(document.body);
    new MutationObserver(function (records) {
      records.forEach(function (r) {
        if (r.type === "childList") r.addedNodes.forEach(translateNode);
        else translateNode(r.target);
      });
    }).observe(document.body, { childList: true, subtree: true, characterData: true, attributes: true,
                                attributeFilter: ATTRS });
  }

  var STYLE = ".course-jax-note{margin:4px 0 6px 64px;padding:6px 10px;border-left:3px solid #d29922;" +
    "background:rgba(210,153,34,.10);font-size:13px;line-height:1.5}" +
    ".course-lite-hint{margin:2px 0}.course-lite-link{color:#1a7f37;font-weight:600;cursor:pointer}" +
    ".course-flash{outline:2px solid #1a7f37;outline-offset:-2px;transition:outline-color 1.5s}" +
    ".course-copy-banner{position:fixed;z-index:10000;left:0;right:0;bottom:0;display:flex;flex-wrap:wrap;align-items:center;gap:6px 10px;padding:8px 14px;" +
    "background:#fff8e1;color:#3b2f00;border-top:1px solid #f0c36d;box-shadow:0 -2px 8px rgba(0,0,0,.12);font-size:14px;line-height:1.5}" +
    ".course-copy-banner button{font:inherit;padding:2px 12px;border-radius:5px;border:1px solid #b08800;" +
    "background:#fff;cursor:pointer}.course-copy-banner .course-hint{color:#6b5a00;font-size:12px}" +
    ".jp-NotebookTrustedStatus{display:none}" +
    ".course-lite .jp-InputArea::before{content:'纯 Python · 可在浏览器里运行';position:absolute;right:8px;top:-2px;" +
    "z-index:2;font-size:11px;padding:0 6px;border-radius:8px;border:1px solid #1a7f37;color:#1a7f37;background:#fff}" +
    ".course-lite .jp-InputArea{position:relative}" +
    "body:not(.course-saved) .jp-NotebookCheckpoint{visibility:hidden}" +
    // 选中的格右上角是 JupyterLab 的单元格工具栏:标记让开
    ".course-lite.jp-mod-active .jp-InputArea::before{display:none}" +
    ".course-run-summary{max-width:min(640px,92vw);line-height:1.6}.course-run-summary a{color:#9cd0ff}" +
    ".course-run-summary button{margin-left:8px;font:inherit;padding:0 10px;border-radius:5px;border:1px solid #888;" +
    "background:#fff;color:#1f2328;cursor:pointer}" +
    ".course-toast{position:fixed;z-index:10001;left:50%;top:64px;transform:translateX(-50%);padding:8px 16px;" +
    "background:#1f2328;color:#fff;border-radius:6px;font-size:14px;box-shadow:0 4px 12px rgba(0,0,0,.25)}";  // 「尚未被信任的」: meaningless to a reader of this site

  function started(value) {
    var style = el("style", "", STYLE);
    style.id = "course-app-style";
    document.head.appendChild(style);
    document.addEventListener("click", onLinkClick, true);
    value.restored.then(function () {
      translateLeftovers();
      onNotebook(currentNotebook());
      value.shell.currentChanged && value.shell.currentChanged.connect(function () { onNotebook(currentNotebook()); });
    });
  }

  function adjust(value) {
    try { kernelOnDemand(value && value.docRegistry); } catch (e) { warn("改成按需启动内核", e); }
    try { noWaitForSave(value && value.commands, value && value.serviceManager && value.serviceManager.workspaces); }
    catch (e) { warn("跳过启动时的工作区保存等待", e); }
    try { guardRuns(value.commands); } catch (e) { warn("拦下需要 JAX 的单元格", e); }
    try { started(value); } catch (e) { warn("加上读者副本标记和站内链接", e); }
  }

  // 插件在 app.start() 里激活:早于路由执行 apputils:load-statedb(它等 app.started)和打开 notebook
  var NAME = /*NAME*/"course-app";
  var plugin = {
    id: NAME + ":plugin",   // <package>:<plugin>, so disabledExtensions can name the package (post.stock_page)
    description: "中文 JAX 课程运行版的调整（按需启动内核、需要 JAX 的格、读者副本、站内链接）",
    autoStart: true,
    activate: function (value) { app = value; adjust(value); }
  };
  // Module Federation 的容器接口(JupyterLab 的 loadComponent/createModule 只用 init 和 get)
  (window._JUPYTERLAB = window._JUPYTERLAB || {})[NAME] = {
    init: function () { return Promise.resolve(); },
    get: function (module) {
      if (module !== "./extension") return Promise.reject(new Error(NAME + " has no module " + module));
      return Promise.resolve(function () { return { __esModule: true, default: [plugin] }; });
    }
  };
})();
