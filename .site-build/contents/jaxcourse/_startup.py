# 站点构建时生成:Pyodide 内核启动时由 IPython 执行(PYTHONSTARTUP,见 lite/jupyter-lite.json)。
# 即使读者没先运行本章的设置格,导入 jax / numpy 失败时也显示中文提示。
def _jaxcourse_startup():
    import sys
    if "/drive" not in sys.path:
        sys.path.append("/drive")
    try:
        from jaxcourse import browser
        browser.install()
    except Exception:
        pass


_jaxcourse_startup()
del _jaxcourse_startup
