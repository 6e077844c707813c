"""The federated extensions the site ships: the course's JupyterLab plugin (course-app.js, written here as a
prebuilt extension) and the two the kernel and the outputs need, named in the build's own configuration.

`jupyter lite build --LiteBuildConfig.federated_extensions=<folder>` copies the folder to
extensions/<name>/ and lists it in jupyter-lite.json like any other prebuilt extension; JupyterLab then
loads static/remoteEntry.js and activates the plugin it exports (see the end of course-app.js).
The container is written by hand: the plugin uses only the application object it is activated with, so
it shares no module with JupyterLab and needs no bundler (and no Node.js).
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

NAME = "@jax-study-zh/course-app"
SOURCE = Path(__file__).with_name("course-app.js")
MODULE = "./extension"
#: one name whatever the content (as course-storage.js): sitebuild/preload.txt lists it among the scripts the
#: reading page preloads, and a hashed name would make that list stale at every edit of course-app.js
ENTRY = "static/remoteEntry.js"


def app_links(cfg: dict) -> dict:
    """What the plugin links to from a cell it did not run: Colab (+ content path) and local setup."""
    repo, branch = cfg["repository"], cfg["branch"]
    return {"colab": f"https://colab.research.google.com/github/{repo}/blob/{branch}/content/",
            "local": f"https://github.com/{repo}#在本地学习"}


def write(dest: Path, cfg: dict) -> Path:
    """Write the extension folder to `dest` (package.json + static/remoteEntry.js); returns `dest`.

    `cfg`: the project config (repository, branch) the plugin's links are made from."""
    js = SOURCE.read_text(encoding="utf-8")
    for mark, value in (("/*CONFIG*/null", app_links(cfg)), ('/*NAME*/"course-app"', NAME)):
        if js.count(mark) != 1:
            raise SystemExit(f"ERROR {SOURCE.name} must hold {mark} exactly once (the build fills it in)")
        js = js.replace(mark, json.dumps(value, ensure_ascii=False))
    shutil.rmtree(dest, ignore_errors=True)
    (dest / "static").mkdir(parents=True)
    (dest / ENTRY).write_text(js, encoding="utf-8")
    package = {"name": NAME, "version": "0.1.0", "private": True,
               "description": "中文 JAX 课程运行版的调整（sitebuild/course-app.js）",
               "jupyterlab": {"_build": {"load": ENTRY, "extension": MODULE}}}
    (dest / "package.json").write_text(json.dumps(package, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
    return dest


#: the prebuilt extensions from this environment the site needs: the Pyodide kernel, and the Pygments styles
#: that highlighted outputs use. Nothing else in sys.prefix reaches the site (nbdime's diff UI, which
#: tools/propose_refresh.py brings in, or whatever a maintainer installed).
SITE_EXTENSIONS = ("@jupyterlite/pyodide-kernel-extension", "jupyterlab_pygments")
CONFIG = "jupyter_lite_config.json"


def configure(lite: Path, plugin: Path) -> dict:
    """Write the staged lite dir's jupyter_lite_config.json (read by `jupyter lite build --lite-dir`): ship exactly
    `plugin` and SITE_EXTENSIONS, taking no federated extension from sys.prefix on its own. Returns the config."""
    share = Path(sys.prefix) / "share" / "jupyter" / "labextensions"
    missing = [name for name in SITE_EXTENSIONS if not (share / name / "package.json").is_file()]
    if missing:
        raise SystemExit(f"ERROR the site needs the JupyterLab extensions {missing}, not installed in {share}; "
                         "install the site extras: ./dev setup test,site")
    path = lite / CONFIG
    cfg = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}   # lite/ may bring its own
    build = cfg.setdefault("LiteBuildConfig", {})
    build["federated_extensions"] = [*build.get("federated_extensions", []), str(plugin),
                                     *(str(share / n) for n in SITE_EXTENSIONS)]
    build["ignore_sys_prefix"] = ["federated_extensions"]
    path.write_text(json.dumps(cfg, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
    return cfg
