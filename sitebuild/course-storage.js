// 课程更新与读者修改(由 tools/site.py build 注入到每个应用页面,在 JupyterLite 启动前运行)。
//
// 每次发布用新的浏览器存储名(jax-study-zh/<release>),所以新版课程永远直接显示,不会被旧的
// 浏览器副本挡住。读者在上一个版本里保存过的文件不会丢:启动前把它们从上一个存储复制到当前存储,
// 与新版同名的文件另存为「<原名>(我的副本 日期)」,放在原文件旁边,并在页面上提示一次。
// 旧存储原样保留。任何出错都只记到控制台,绝不挡住页面启动。
(function () {
  "use strict";
  var CONFIG = /*CONFIG*/null;
  var LAST_KEY = CONFIG.prefix + ":last-storage";
  // 上次访问的版本里各课程文件的指纹(单元格源码的 FNV-1a):旧存储里的文件指纹相同,说明读者只是运行、
  // 自动保存过,没改源码,迁移时不当作「我的副本」
  var PRINTS_KEY = CONFIG.prefix + ":last-fingerprints";
  var MAX_WAIT_MS = 3000;

  function req(r) {
    return new Promise(function (ok, fail) {
      r.onsuccess = function () { ok(r.result); };
      r.onerror = function () { fail(r.error); };
    });
  }

  function openDb(name, create) {
    return new Promise(function (ok, fail) {
      var r = indexedDB.open(name);
      r.onupgradeneeded = function () {
        if (!create) { r.transaction.abort(); return; }
        if (!r.result.objectStoreNames.contains("files")) r.result.createObjectStore("files");
      };
      r.onsuccess = function () { ok(r.result); };
      r.onerror = function () { fail(r.error); };
      r.onblocked = function () { fail(new Error("blocked")); };
    });
  }

  function copyName(path, taken) {
    var slash = path.lastIndexOf("/"), dot = path.lastIndexOf(".");
    if (dot <= slash) dot = path.length;
    var day = new Date().toISOString().slice(0, 10);
    for (var n = 1; ; n++) {
      var tag = "(我的副本 " + day + (n > 1 ? " " + n : "") + ")";
      var p = path.slice(0, dot) + tag + path.slice(dot);
      if (!taken.has(p)) return p;
    }
  }

  // 与 sitebuild/post.py 的 fingerprint 相同:各单元格源码用 \0 连起来,UTF-8 字节的 32 位 FNV-1a
  function fingerprint(model) {
    var nb = model && model.content;
    if (typeof nb === "string") { try { nb = JSON.parse(nb); } catch (e) { return null; } }
    if (!nb || !Array.isArray(nb.cells)) return null;
    var text = nb.cells.map(function (c) {
      return Array.isArray(c.source) ? c.source.join("") : String(c.source || "");
    }).join("\u0000");
    var bytes = new TextEncoder().encode(text), h = 0x811c9dc5;
    for (var i = 0; i < bytes.length; i++) { h ^= bytes[i]; h = Math.imul(h, 0x01000193) >>> 0; }
    return ("0000000" + h.toString(16)).slice(-8);
  }

  window.courseFingerprint = fingerprint;   // 浏览器测试用它核对与 post.py 的算法一致

  async function migrate() {
    var last = localStorage.getItem(LAST_KEY);
    if (last === CONFIG.current) return [];
    var moved = [], prints = null;
    try { prints = JSON.parse(localStorage.getItem(PRINTS_KEY) || "null"); } catch (e) { prints = null; }
    if (last) {
      var old = await openDb(last, false).catch(function () { return null; });
      if (old && old.objectStoreNames.contains("files")) {
        var tx = old.transaction("files", "readonly"), st = tx.objectStore("files");
        var keys = await req(st.getAllKeys()), vals = await req(st.getAll());
        old.close();
        var deployed = new Set(CONFIG.deployed);
        var cur = await openDb(CONFIG.current, true);
        var wtx = cur.transaction("files", "readwrite"), wst = wtx.objectStore("files");
        var taken = new Set((await req(wst.getAllKeys())).concat(CONFIG.deployed));
        for (var i = 0; i < keys.length; i++) {
          var model = vals[i], path = String(keys[i]);
          if (!model || model.type === "directory") continue;
          // 上一版发布的文件,读者没改过源码(只运行、自动保存过):新版直接取代它
          if (last && prints && prints[path] && fingerprint(model) === prints[path]) continue;
          var dest = deployed.has(path) ? copyName(path, taken) : path;
          if (!deployed.has(path) && taken.has(dest)) continue;  // already copied before
          taken.add(dest);
          var copy = Object.assign({}, model, { path: dest, name: dest.split("/").pop() });
          wst.put(copy, dest);
          if (dest !== path) moved.push([path, dest]);
        }
        await new Promise(function (ok, fail) { wtx.oncomplete = ok; wtx.onerror = function () { fail(wtx.error); }; });
        cur.close();
      }
    }
    localStorage.setItem(LAST_KEY, CONFIG.current);
    localStorage.setItem(PRINTS_KEY, JSON.stringify(CONFIG.fingerprints || {}));
    return moved;
  }

  function notice(moved) {
    if (!moved.length) return;
    var box = document.createElement("div");
    box.id = "course-update-notice";
    box.setAttribute("role", "status");
    box.style.cssText = "position:fixed;z-index:10000;right:16px;bottom:16px;max-width:420px;padding:12px 16px;" +
      "background:#fff8e1;border:1px solid #f0c36d;border-radius:6px;font:14px/1.5 sans-serif;color:#333;" +
      "box-shadow:0 2px 8px rgba(0,0,0,.2)";
    box.innerHTML = "<b>课程已更新到新版本。</b>你在旧版本里保存过的修改没有丢，已另存为：" +
      "<ul style='margin:4px 0 4px 18px;padding:0'></ul>在课程的文件列表里打开即可。<button>知道了</button>";
    var ul = box.querySelector("ul");
    moved.forEach(function (m) { var li = document.createElement("li"); li.textContent = m[1]; ul.appendChild(li); });
    box.querySelector("button").onclick = function () { box.remove(); };
    document.body.appendChild(box);
  }

  var timeout = new Promise(function (ok) { setTimeout(function () { ok(null); }, MAX_WAIT_MS); });
  var work = (typeof indexedDB === "undefined" ? Promise.resolve([]) : migrate()).catch(function (e) {
    console.warn("course-storage: 没能迁移上一版本的浏览器副本（旧存储原样保留）：", e);
    return [];
  });
  window.courseStorageMoved = work;
  window.courseStorageReady = Promise.race([work, timeout]);
  // 读者在当前版本里保存过的文件(没保存过就是 null)。course-preview.js 用它预览读者自己的副本:
  // JupyterLab 打开的也是这一份。
  window.courseSavedFile = function (path) {
    return window.courseStorageReady.then(function () {
      if (typeof indexedDB === "undefined") return null;
      return openDb(CONFIG.current, false).then(function (db) {
        if (!db.objectStoreNames.contains("files")) { db.close(); return null; }
        return req(db.transaction("files", "readonly").objectStore("files").get(path)).then(function (model) {
          db.close();
          return model || null;
        });
      });
    }).catch(function () { return null; });
  };
  var deployed = new Set(CONFIG.deployed);
  // 课程发布的文件(读者保存过的同名文件就是「读者的副本」,course-app.js 据此显示标记)
  window.courseIsDeployed = function (path) { return deployed.has(path); };
  // 恢复原版:读者的版本另存为「<原名>(我的副本 日期)」,再从当前存储里删掉它(和它的检查点),
  // 之后打开的就是课程原版。返回副本的路径。
  window.courseRestoreOriginal = function (path) {
    return openDb(CONFIG.current, false).then(function (db) {
      var stores = ["files", "checkpoints"].filter(function (s) { return db.objectStoreNames.contains(s); });
      var tx = db.transaction(stores, "readwrite"), files = tx.objectStore("files");
      return req(files.getAllKeys()).then(function (keys) {
        return req(files.get(path)).then(function (model) {
          if (!model) throw new Error("no saved copy of " + path);
          var dest = copyName(path, new Set(keys.map(String).concat(CONFIG.deployed)));
          files.put(Object.assign({}, model, { path: dest, name: dest.split("/").pop() }), dest);
          files.delete(path);
          if (stores.indexOf("checkpoints") >= 0) tx.objectStore("checkpoints").delete(path);
          return new Promise(function (ok, fail) {
            tx.oncomplete = function () { db.close(); ok(dest); };
            tx.onerror = function () { db.close(); fail(tx.error); };
          });
        });
      });
    });
  };
  work.then(function (moved) {
    if (document.body) notice(moved || []);
    else window.addEventListener("DOMContentLoaded", function () { notice(moved || []); });
  });
})();
