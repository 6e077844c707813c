"""Normalisation of volatile text before saved and fresh outputs are compared.

Each rule is (name, pattern, replacement). Keep the list short and every rule justified:
a rule that masks too much hides real behaviour changes.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")

# Masks applied to every output.
RULES: list[tuple[str, re.Pattern, str]] = [
    ("address", re.compile(r"0x[0-9a-fA-F]{6,}"), "0x…"),
    ("kernel cell file", re.compile(r"/tmp/ipykernel_\d+/\d+\.py"), "<cell>"),
    ("site-packages path", re.compile(r"(?:[A-Za-z]:)?[^\s'\"()]*?/(?:site|dist)-packages/"), "<site-packages>/"),
    ("timing", re.compile(r"(?<![\w.])\d+(?:\.\d+)?(?:e[-+]?\d+)?[ \t]*(?:ns|µs|us|ms|s|秒|毫秒|微秒)(?![\w])"), "<time>"),
    ("pid", re.compile(r"\bpid[ =:]\s*\d+"), "pid <n>"),
]

NUMBER = re.compile(r"[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?")


def repo_root() -> Path:
    """Root of the checkout (the folder holding pyproject.toml)."""
    return Path(__file__).resolve().parent.parent


def normalize(text: str) -> tuple[str, list[str]]:
    """Return the normalised text and the names of the rules that changed it."""
    fired: list[str] = []
    out = ANSI.sub("", text)
    if out != text:
        fired.append("ansi")
    for root in {str(repo_root()), sys.prefix, str(Path.home())}:
        if root and root != "/" and root in out:
            out = out.replace(root, "<path>")
            fired.append("machine path")
    for name, pattern, repl in RULES:
        new = pattern.sub(repl, out)
        if new != out:
            fired.append(name)
            out = new
    return out, fired
