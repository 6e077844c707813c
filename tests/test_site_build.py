"""Site build pieces without a browser: staging, Colab links, the in-browser friendly ImportError."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

from sitebuild import post, stage  # noqa: E402
from sitebuild.demo import write_demo  # noqa: E402

CFG = {"repository": "owner/repo", "branch": "dev"}


def test_colab_url_quotes_the_chinese_path():
    url = stage.colab_url("owner/repo", "dev", "入门/01_JAX简介.ipynb")
    assert url == ("https://colab.research.google.com/github/owner/repo/blob/dev/content/"
                   "%E5%85%A5%E9%97%A8/01_JAX%E7%AE%80%E4%BB%8B.ipynb")


def test_staged_copy_has_banner_browser_kernel_and_package(tmp_path):
    src = write_demo(tmp_path / "src")
    before = (src / "入门/01_JAX简介.ipynb").read_bytes()
    release = stage.stage_contents(src, tmp_path / "out", CFG)
    nb = json.loads((tmp_path / "out/入门/01_JAX简介.ipynb").read_text(encoding="utf-8"))
    assert nb["cells"][0]["id"] == stage.BANNER_ID
    assert "blob/dev/content/%E5%85%A5%E9%97%A8/01_JAX" in nb["cells"][0]["source"]
    assert nb["metadata"]["kernelspec"]["name"] == "python"
    assert (src / "入门/01_JAX简介.ipynb").read_bytes() == before, "the source notebook was edited"
    assert json.loads((tmp_path / "out/jaxcourse/_site.json").read_text()) == CFG
    # every multi-line text is one string (JupyterLite shows list-valued outputs with a stray "," per line)
    saved = json.loads(before)
    for old, new in zip(saved["cells"], nb["cells"][1:]):
        assert new["source"] == "".join(old["source"])
        for o_old, o_new in zip(old.get("outputs", []), new.get("outputs", [])):
            for key in ("text",):
                if key in o_old:
                    assert o_new[key] == "".join(o_old[key])
            for mime, value in o_old.get("data", {}).items():
                assert o_new["data"][mime] == ("".join(value) if isinstance(value, list) else value)
    assert (tmp_path / "out/jaxcourse/browser.py").exists()
    # restaging is idempotent and a content change gives a new release id
    assert stage.stage_contents(src, tmp_path / "out", CFG) == release
    path = src / "入门/02_第二章.ipynb"
    path.write_text(path.read_text() + " ")           # same notebook, other bytes: same release
    assert stage.stage_contents(src, tmp_path / "out", CFG) == release
    path.write_text(path.read_text().replace("这里是第二节。", "这里是改过的第二节。"))
    assert stage.stage_contents(src, tmp_path / "out", CFG) != release


def test_unlinked_chapters_are_reported(tmp_path):
    src = write_demo(tmp_path / "src")
    (src / "入门/09_孤儿.ipynb").write_text((src / "入门/02_第二章.ipynb").read_text())
    assert stage.unlinked_chapters(src, "入门/00_总目录.ipynb") == ["09_孤儿.ipynb"]


FRIENDLY = r"""
import sys
sys.path.insert(0, sys.argv[1])
from jaxcourse import browser
browser.NEEDS_REAL_PYTHON = browser.NEEDS_REAL_PYTHON | {"surely_absent_pkg"}
assert browser.install() and not browser.install()
import json                      # real modules still import
try:
    import surely_absent_pkg.sub
except ImportError as e:
    assert isinstance(e, ModuleNotFoundError) and e.name == "surely_absent_pkg"
    print("\n".join(e._render_traceback_()))
try:
    import another_absent_pkg    # not a course dependency: the plain error
except ImportError as e:
    assert not hasattr(e, "_render_traceback_")
"""


def test_friendly_import_error_is_short_chinese_and_catchable():
    proc = subprocess.run([sys.executable, "-c", FRIENDLY, str(ROOT / "content")],
                          capture_output=True, text=True, check=True)
    assert "浏览器里的 Python（Pyodide）没有 surely_absent_pkg" in proc.stdout
    assert "JAX 0.12.0.1" in proc.stdout and "Colab" in proc.stdout and "./dev setup" in proc.stdout


def test_preload_inject_is_idempotent_and_reports_missing(tmp_path, monkeypatch):
    """Config hints always; listed scripts that exist are preloaded once; missing ones are reported."""
    from sitebuild import preload

    (tmp_path / "notebooks").mkdir()
    (tmp_path / "build").mkdir()
    (tmp_path / "build" / "a.js").write_text("1")
    (tmp_path / "jupyter-lite.json").write_text("{}")
    (tmp_path / "config-utils.js").write_text("1")
    page = tmp_path / preload.PAGE
    page.write_text("<head>\n    <script id=\"jupyter-config-data\">{}</script>\n"
                    "<script>import(\n '../config-utils.js?_=1'\n)</script></head>")
    listing = tmp_path / "preload.txt"
    listing.write_text("# comment\nbuild/a.js\nbuild/gone.js\nconfig-utils.js?_=1\n")
    monkeypatch.setattr(preload, "LIST", listing)
    first = preload.inject(tmp_path)
    html = page.read_text()
    assert first == {"injected": 1, "missing": ["build/gone.js"]}
    assert html.count('href="../build/a.js"') == 1 and 'rel="modulepreload" href="../config-utils.js?_=1"' in html
    assert 'href="../jupyter-lite.json"' in html and 'href="./jupyter-lite.json"' not in html
    preload.inject(tmp_path)
    assert page.read_text() == html
    assert "data-course-preload" not in preload.strip(html)


def test_stock_page_undoes_every_course_addition(tmp_path, monkeypatch):
    """The bench baseline is the page exactly as JupyterLite wrote it, and the course page differs."""
    from sitebuild import extension, preload, preview

    cache = _fake_marked(tmp_path / "cache")
    (tmp_path / "files").mkdir()
    (tmp_path / "files" / "a.ipynb").write_text("{}")
    (tmp_path / "notebooks").mkdir()
    (tmp_path / "build").mkdir()
    (tmp_path / "build" / "a.js").write_text("1")
    listing = tmp_path / "preload.txt"
    listing.write_text("build/a.js\n")
    monkeypatch.setattr(preload, "LIST", listing)
    page = tmp_path / preload.PAGE
    original = ("<!doctype html><html><head>\n    <script id=\"jupyter-config-data\">{}</script>\n"
                "<script type=\"module\">\n        await import('../config-utils.js?_=1');\n</script></head></html>")
    page.write_text(original)
    post.inject_storage_script(tmp_path, "p", "r1", cache)
    preload.inject(tmp_path)
    course = page.read_text()
    assert post.SCRIPT in course and "data-course-preload" in course
    assert preview.SCRIPT in course and "#course-preview" in course
    stock = post.stock_page(course)
    assert stock == post.stock_page(original)   # every course addition to the page undone
    assert f'{{"disabledExtensions": ["{extension.NAME}"]}}' in stock and post.SCRIPT not in stock   # plugin off too
    shipped = (tmp_path / preview.MARKED).read_text()
    assert "MIT License" in shipped and "sourceMappingURL" not in shipped
    assert (tmp_path / preview.SCRIPT).is_file()


def _fake_marked(cache: Path) -> Path:
    """A stand-in for the npm tarball of marked (the unit tests need no network)."""
    import io
    import tarfile

    from sitebuild import preview

    cache.mkdir()
    data = b"/**\n * marked - a markdown parser (MIT License)\n */\nvar marked = {};\n//# sourceMappingURL=marked.umd.js.map\n"
    with tarfile.open(cache / f"marked-{preview.MARKED_VERSION}.tgz", "w:gz") as tar:
        info = tarfile.TarInfo("package/lib/marked.umd.js")
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
    return cache


def test_the_build_ships_exactly_the_course_plugin_and_the_two_extensions_it_needs(tmp_path):
    """nbdime (used by tools/propose_refresh.py) installs a JupyterLab extension in sys.prefix; the staged lite
    dir's jupyter_lite_config.json takes no extension from sys.prefix on its own and names the ones the site ships."""
    from sitebuild import extension

    share = Path(sys.prefix) / "share" / "jupyter" / "labextensions"
    assert (share / "nbdime-jupyterlab").is_dir()
    plugin = tmp_path / "plugin"
    cfg = extension.configure(tmp_path, plugin)
    assert json.loads((tmp_path / extension.CONFIG).read_text(encoding="utf-8")) == cfg
    build = cfg["LiteBuildConfig"]
    assert build["ignore_sys_prefix"] == ["federated_extensions"]
    assert build["federated_extensions"] == [str(plugin), str(share / "@jupyterlite" / "pyodide-kernel-extension"),
                                             str(share / "jupyterlab_pygments")]
    assert not any("nbdime" in p for p in build["federated_extensions"])
    # a jupyter_lite_config.json that lite/ brings keeps its own settings and extensions
    (tmp_path / "own").mkdir()
    (tmp_path / "own" / extension.CONFIG).write_text(json.dumps(
        {"LiteBuildConfig": {"federated_extensions": ["extra.whl"], "no_sourcemaps": True}}))
    own = extension.configure(tmp_path / "own", plugin)["LiteBuildConfig"]
    assert own["no_sourcemaps"] is True and own["federated_extensions"][:2] == ["extra.whl", str(plugin)]


def test_staged_notebooks_hold_multiline_texts_as_strings_so_jupyterlite_shows_no_stray_commas(tmp_path):
    src = tmp_path / "n.ipynb"
    src.write_text(json.dumps({"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": [{
        "cell_type": "code", "id": "c1", "metadata": {}, "execution_count": 1, "source": ["print(1)\n", "x"],
        "outputs": [
            {"output_type": "stream", "name": "stdout", "text": ["JAX : 0.12.0.1\n", "jaxlib : 0.12.0.1\n"]},
            {"output_type": "execute_result", "execution_count": 1, "metadata": {},
             "data": {"text/plain": ["Array([1.,\n", "       2.], dtype=float32)"], "application/json": {"a": [1, 2]}}},
            {"output_type": "error", "ename": "E", "evalue": "v", "traceback": ["frame 1", "frame 2"]}]}]}))
    stage.stage_notebook(src, tmp_path / "out.ipynb", "n.ipynb", CFG)
    cell = json.loads((tmp_path / "out.ipynb").read_text())["cells"][1]
    assert cell["source"] == "print(1)\nx"
    assert cell["outputs"][0]["text"] == "JAX : 0.12.0.1\njaxlib : 0.12.0.1\n"
    assert cell["outputs"][1]["data"] == {"text/plain": "Array([1.,\n       2.], dtype=float32)",
                                          "application/json": {"a": [1, 2]}}
    assert cell["outputs"][2]["traceback"] == ["frame 1", "frame 2"]


NAME_HINT = r"""
import sys
sys.path.insert(0, sys.argv[1])
from IPython.core.interactiveshell import InteractiveShell
shell = InteractiveShell.instance()
from jaxcourse import browser
browser.install()
shell.run_cell("y = jnp.ones(3)")          # a name that a JAX cell defines: the Chinese note
print("=== next cell ===")
shell.run_cell("print(reader_typo)")       # any other name: the usual traceback
"""


def test_a_later_jax_cell_gets_the_chinese_note_for_names_like_jnp_and_typos_keep_their_traceback():
    proc = subprocess.run([sys.executable, "-c", NAME_HINT, str(ROOT / "content")],
                          capture_output=True, text=True, check=True)
    first, second = proc.stdout.split("=== next cell ===")
    assert "`jnp` 没有定义" in first and "Colab" in first and "原始报错\uff1aNameError: name 'jnp' is not defined" in first
    assert "Traceback" not in first
    assert "NameError" in second and "reader_typo" in second and "没有定义" not in second


def test_colab_links_follow_the_repository_that_builds_the_site():
    from sitebuild import project_config

    local = project_config({})
    assert local["source"].startswith("pyproject.toml") and local["repository"].count("/") == 1
    fork = project_config({"GITHUB_REPOSITORY": "reader/jax-fork", "GITHUB_REF_TYPE": "branch", "GITHUB_REF_NAME": "dev"})
    assert fork == {"repository": "reader/jax-fork", "branch": "dev", "source": "GITHUB_REPOSITORY"}
    pr = project_config({"GITHUB_REPOSITORY": "reader/jax-fork", "GITHUB_REF_TYPE": "branch",
                         "GITHUB_REF_NAME": "7/merge", "GITHUB_HEAD_REF": "feature"})
    assert pr["branch"] == local["branch"]  # a pull request's merge ref is no branch a reader can open
    cloned = project_config({}, remote="reader/course")
    assert cloned["repository"] == "reader/course" and cloned["source"] == "git remote origin"
    assert project_config({"GITHUB_REPOSITORY": "ci/course"}, remote="reader/course")["repository"] == "ci/course"


@pytest.mark.parametrize("url, expected", [
    ("https://github.com/reader/jax-course.git", "reader/jax-course"),
    ("https://github.com/reader/jax-course", "reader/jax-course"),
    ("git@github.com:reader/jax.course.git", "reader/jax.course"),
    ("ssh://git@github.com/reader/c/", "reader/c"),
    ("https://gitlab.com/reader/jax-course.git", None),
    ("/srv/git/course.git", None),
])
def test_a_local_build_takes_the_repository_from_a_github_origin(tmp_path, url, expected):
    from sitebuild import github_remote

    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    subprocess.run(["git", "-C", str(tmp_path), "remote", "add", "origin", url], check=True)
    assert github_remote(tmp_path) == expected
    assert github_remote(tmp_path / "nowhere") is None


def test_npm_tarballs_come_from_the_registry_over_https_checked_and_cached_without_node(tmp_path, monkeypatch):
    """The site build needs no Node.js/npm: a tarball is fetched once from the registry (here a loopback
    stand-in), its integrity hash checked, and kept; a tampered tarball is refused and nothing is cached."""
    import base64
    import hashlib
    import http.server
    import threading

    from sitebuild import npm

    good = b"tarball bytes"
    served = {"/pkg/1.0.0/-/pkg-1.0.0.tgz": good, "/bad/1.0.0/-/bad-1.0.0.tgz": b"tampered"}
    integrity = "sha512-" + base64.b64encode(hashlib.sha512(good).digest()).decode()
    hits = []

    class Registry(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            hits.append(self.path)
            name, version = self.path.strip("/").split("/")[:2]
            if self.path.endswith(".tgz"):
                body = served[self.path]
            else:
                body = json.dumps({"dist": {"tarball": f"{base}/{name}/{version}/-/{name}-{version}.tgz",
                                            "integrity": integrity}}).encode()
            self.send_response(200)
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Registry)
    base = f"http://127.0.0.1:{server.server_address[1]}"
    threading.Thread(target=server.serve_forever, daemon=True).start()
    monkeypatch.setenv("NPM_CONFIG_REGISTRY", base + "/")
    monkeypatch.setenv("PATH", str(tmp_path / "no-node"))   # neither node nor npm can be found
    try:
        cache = tmp_path / "cache"
        tgz = npm.pack(cache, "pkg", "1.0.0", "the test")
        assert tgz == cache / "pkg-1.0.0.tgz" and tgz.read_bytes() == good
        n = len(hits)
        assert npm.pack(cache, "pkg", "1.0.0", "the test") == tgz and len(hits) == n, "a cached tarball was fetched again"
        with pytest.raises(SystemExit, match="integrity"):
            npm.pack(cache, "bad", "1.0.0", "the test")
        assert sorted(p.name for p in cache.iterdir()) == ["pkg-1.0.0.tgz"]
    finally:
        server.shutdown()
    with pytest.raises(SystemExit, match="needs pkg@1.0.0 from the npm registry"):   # registry gone
        npm.pack(tmp_path / "other", "pkg", "1.0.0", "the test")


def test_readme_sends_learners_to_the_site_and_clone_of_the_configured_repository():
    """README's first section links the GitHub Pages site and the clone of [tool.jaxcourse] repository:
    change the repository there and this test says which README lines to update."""
    from sitebuild import project_config

    owner, name = project_config(env={})["repository"].split("/")
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    learners = readme.split("## 给学习者", 1)[1].split("\n## ", 1)[0]
    assert f"<https://{owner.lower()}.github.io/{name}/>" in learners
    assert f"git clone https://github.com/{owner}/{name}.git && cd {name}" in learners
    assert readme.index("## 给学习者") < readme.index("## 快速开始") < readme.index("## 维护")


def test_course_plugin_is_a_prebuilt_federated_extension(tmp_path):
    """course-app.js becomes extensions/<name>/ with the package.json that `jupyter lite build` looks for, and the
    script registers the container JupyterLab loads (its name = the package name) with the links filled in."""
    from sitebuild import extension

    cfg = {"repository": "o/r", "branch": "main"}
    links = extension.app_links(cfg)
    assert links["local"] == "https://github.com/o/r#在本地学习" and "/o/r/blob/main/content/" in links["colab"]
    dest = extension.write(tmp_path / "ext", cfg)
    package = json.loads((dest / "package.json").read_text(encoding="utf-8"))
    assert package["name"] == extension.NAME
    assert package["jupyterlab"]["_build"] == {"load": extension.ENTRY, "extension": "./extension"}
    js = (dest / extension.ENTRY).read_text(encoding="utf-8")
    assert "/*CONFIG*/" not in js and "/*NAME*/" not in js
    assert json.dumps(links, ensure_ascii=False) in js
    assert f'var NAME = "{extension.NAME}";' in js and "window._JUPYTERLAB" in js
    assert "defineProperty(window, \"jupyterapp\"" not in js   # activated as a plugin, not by intercepting the app
    (dest / "static" / "stale.js").write_text("old")
    extension.write(dest, cfg)
    assert sorted(p.name for p in (dest / "static").iterdir()) == ["remoteEntry.js"]   # nothing left from before
