// 页面启动的两处调整(由 tools/site.py build 注入到每个应用页面,在 JupyterLite 启动前运行)。
// 需要 jupyter-lite.json 里的 exposeAppInBrowser: true:JupyterLite 在启动前把应用赋给
// window.jupyterapp,这里截住这次赋值。任何出错只记到控制台,页面照常启动(行为同未调整时)。
//
// 1. 内核按需启动。JupyterLab 打开 notebook 时默认马上启动内核;在本站那意味着每打开一章都要下载
//    约 18 MB 的 Pyodide 并编译,和页面渲染抢 CPU,而多数读者只是阅读保存的输出。这里让「打开文件」
//    不启动内核(shouldStart: false),并打开 autoStartDefault:读者第一次运行单元格时,JupyterLab
//    直接启动默认内核(本站只有 Pyodide 的 python),不弹出「选择内核」对话框。
// 2. 不等工作区保存。路由先执行 apputils:load-statedb:它读出保存的工作区后,还要等一次防抖保存
//    (每次状态变化再推迟 500 ms),启动时这要空等约 1 秒,之后才打开 URL 里的 notebook。这里让
//    这条命令在工作区读出后就算完成;保存照常在后台进行。带 ?clone / ?reset 的地址不受影响。
(function () {
  "use strict";
  var app = null;

  function warn(what, e) {
    console.warn("course-app: 没能" + what + "(照 JupyterLab 默认行为运行):", e);
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

  function adjust(value) {
    try { kernelOnDemand(value && value.docRegistry); } catch (e) { warn("改成按需启动内核", e); }
    try { noWaitForSave(value && value.commands, value && value.serviceManager && value.serviceManager.workspaces); }
    catch (e) { warn("跳过启动时的工作区保存等待", e); }
  }

  try {
    Object.defineProperty(window, "jupyterapp", {
      configurable: true,
      get: function () { return app; },
      set: function (value) { app = value; adjust(value); }
    });
  } catch (e) {
    warn("截住 window.jupyterapp", e);
  }
})();
