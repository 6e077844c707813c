"""Chinese punctuation in Chinese prose (GB/T 15834): full-width `,:;?!()` and `。` next to Chinese text.

Code, math, URLs, HTML tags and English stay as they are. One rule set serves the fixer
(tools/zh_punct.py rewrites markdown, code comments, README and CONTRIBUTING) and the lint
(`zh-punctuation`), so what the lint reports is exactly what the fixer would change.
"""

from __future__ import annotations

import io
import re
import tokenize

#: a Chinese character or full-width punctuation: what makes a neighbour "Chinese"
_HAN = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")
_ZH = re.compile(r"[\u3000-\u303f\u3400-\u9fff\uf900-\ufaff\uff01-\uff5e\u201c\u201d\u2018\u2019\u2026\u2014]")
FULL = {",": "\uff0c", ":": "\uff1a", ";": "\uff1b", "?": "\uff1f", "!": "\uff01", "(": "\uff08", ")": "\uff09",
        ".": "\u3002"}
#: stands for a protected span (code, math, a URL) when looking at a character's neighbours
_CODE = "\x00"

# spans that are not prose, in the order they are tried at one position
_PROTECTED = re.compile(
    r"(?P<code>(`+)[\s\S]*?(?<!`)\2(?!`))"  # inline code, any backtick run
    r"|(?P<math>\$\$[\s\S]+?\$\$|(?<![\\$])\$(?=\S)[^$\n]+?(?<=\S)\$(?!\d))"  # $$…$$ and $…$
    r"|(?P<target>\]\((?:[^()\s]|\([^()\s]*\))*\))"  # a link target ](…), one level of parens inside
    r"|(?P<ref>^\s*\[[^\]]+\]:.*$)"  # a reference definition [x]: url
    r"|(?P<url><?https?://[^\s<>)\]]+>?)"  # bare or <auto> links
    r"|(?P<html></?[A-Za-z][^<>\n]*>|<!--[\s\S]*?-->)"  # HTML tags and comments
    r"|(?P<image>!\[)"  # image marker: the ! is not an exclamation
    r"|(?P<entity>&[a-zA-Z]+;|&#\d+;)",
    re.M,
)
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")


def _segments(text: str):
    """(is_prose, text) pieces of markdown: fenced blocks and protected spans are not prose."""
    lines = text.splitlines(keepends=True)
    fence = None
    prose: list[str] = []
    for line in lines:
        m = _FENCE.match(line)
        if fence is None and m:
            if prose:
                yield from _inline_segments("".join(prose))
                prose = []
            fence = m.group(1)[0] * len(m.group(1))
            yield False, line
        elif fence is not None:
            if line.strip().startswith(fence) and line.strip().strip(fence[0]) == "":
                fence = None
            yield False, line
        else:
            prose.append(line)
    if prose:
        yield from _inline_segments("".join(prose))


def _inline_segments(text: str):
    pos = 0
    for m in _PROTECTED.finditer(text):
        if m.start() > pos:
            yield True, text[pos:m.start()]
        yield False, m.group(0)
        pos = m.end()
    if pos < len(text):
        yield True, text[pos:]


def _is_zh(ch: str) -> bool:
    return bool(ch) and bool(_ZH.match(ch))


_SKIP = " \t*" + _CODE  # blanks, emphasis marks and code spans do not decide a mark's language


def _neighbour(s, i: int, step: int) -> str:
    """Nearest deciding character from i in direction step: blanks, `*` and code spans are skipped,
    a single line break too (a sentence may wrap), a blank line is not ('' there)."""
    j = i + step
    while 0 <= j < len(s):
        c = s[j]
        if c == "\n":
            k = j + step
            while 0 <= k < len(s) and s[k] in " \t":
                k += step
            if not (0 <= k < len(s)) or s[k] == "\n":
                return ""
        elif c not in _SKIP:
            return c
        j += step
    return ""


def _han_side(s, i: int, step: int, reach: int = 40) -> bool:
    """Whether Chinese comes first from i in direction step, across English words and code on the
    same line (`pyenv;JAX 不支持`: both sides are Chinese sentences, so the mark is Chinese)."""
    j = i + step
    while 0 <= j < len(s) and abs(j - i) <= reach and s[j] != "\n":
        c = s[j]
        if _ZH.match(c):
            return True
        if not (c.isalnum() or c in " \t.-_/" + _SKIP):
            return False
        j += step
    return False


def _line_neighbour(s: str, i: int, step: int) -> str:
    """Nearest non-blank character from i on the same line ('' at the line's end)."""
    j = i + step
    while 0 <= j < len(s) and s[j] in " \t":
        j += step
    return s[j] if 0 <= j < len(s) and s[j] != "\n" else ""


def _fix_prose(flat: str, prose: list[bool]) -> tuple[str, list[bool]]:
    """Rewrite punctuation at prose positions of flat (protected spans are masked as _CODE)."""
    out = list(flat)
    keep = [True] * len(flat)  # False: a blank to drop next to a full-width mark
    pairs = _paren_pairs(flat, prose)
    for i, ch in enumerate(flat):
        if not prose[i] or ch not in FULL:
            continue
        before, after = _neighbour(out, i, -1), _neighbour(flat, i, +1)
        if ch in "()":
            if i not in pairs:
                continue
        elif ch == ".":
            if not (_is_zh(_neighbour(out, i, -1)) and _line_neighbour(flat, i, +1) == ""):
                continue
        elif ch == "!" and _line_neighbour(flat, i, +1) == "[":
            continue
        elif not (_is_zh(before) or _is_zh(after) or (_han_side(out, i, -1) and _han_side(flat, i, +1))):
            continue
        elif ch == ":" and before.isdigit() and after.isdigit():
            continue
        out[i] = FULL[ch]
        for step in (-1, 1):  # full-width marks carry their own space
            if _line_neighbour(flat, i, step) in ("|", ""):
                continue  # a table's cell border keeps its padding; so do indentation and line ends
            j = i + step
            while 0 <= j < len(flat) and flat[j] in " \t" and prose[j]:
                keep[j] = False
                j += step
    return "".join(c for c, k in zip(out, keep) if k), [p for p, k in zip(prose, keep) if k]


def _paren_pairs(flat: str, prose: list[bool]) -> set[int]:
    """Positions of prose parentheses to make full-width: a matched pair on one line that holds
    Chinese or follows Chinese."""
    chosen: set[int] = set()
    stack: list[int] = []
    for i, ch in enumerate(flat):
        if ch == "\n" and flat[i + 1:i + 2] == "\n":
            stack.clear()  # a pair never spans paragraphs
        if not prose[i]:
            continue
        if ch == "(":
            stack.append(i)
        elif ch == ")" and stack:
            j = stack.pop()
            inner = flat[j + 1:i]
            if "," in inner and not _ZH.search(inner):
                continue  # a tuple such as a shape (3,) or (a, b) is code
            if _ZH.search(inner.replace(_CODE, "")) or _is_zh(_neighbour(flat, j, -1)):
                chosen.update((i, j))
    return chosen


def fix_markdown(text: str) -> str:
    """text with standard Chinese punctuation in its Chinese prose (idempotent: repeated to a fixed point,
    since one full-width mark can make its neighbour Chinese)."""
    for _ in range(8):
        fixed = _fix_once(text)
        if fixed == text:
            break
        text = fixed
    return text


def _fix_once(text: str) -> str:
    parts = list(_segments(text))
    flat = "".join(p if is_prose else _mask(p) for is_prose, p in parts)
    prose = [c for is_prose, p in parts for c in [is_prose] * len(p)]
    fixed, kept = _fix_prose(flat, prose)
    # put the protected spans back in place of their masks
    originals = iter(p for is_prose, p in parts if not is_prose)
    out, i = [], 0
    while i < len(fixed):
        if not kept[i]:
            span = next(originals)
            out.append(span)
            i += len(_mask(span))
        else:
            out.append(fixed[i])
            i += 1
    return "".join(out)


def _mask(span: str) -> str:
    """A protected span as neutral characters of the same length (newlines kept: they end lines)."""
    return "".join("\n" if c == "\n" else _CODE for c in span)


def fix_comments(source: str) -> str:
    """Python source with Chinese punctuation fixed in its comments only."""
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
    except (tokenize.TokenError, SyntaxError, IndentationError):
        return source
    lines = source.splitlines(keepends=True)
    for tok in reversed(tokens):
        if tok.type != tokenize.COMMENT or not _HAN.search(tok.string):
            continue
        row, col = tok.start
        line = lines[row - 1]
        end = col + len(tok.string)
        lines[row - 1] = line[:col] + fix_markdown(tok.string) + line[end:]
    return "".join(lines)


def prose_text(text: str, *, code: bool = False) -> str:
    """The prose of markdown (code, math, URLs and tags dropped), or of a code cell's comments."""
    if code:
        try:
            tokens = tokenize.generate_tokens(io.StringIO(text).readline)
            text = "\n".join(t.string for t in tokens if t.type == tokenize.COMMENT)
        except (tokenize.TokenError, SyntaxError, IndentationError):
            return ""
    return "".join(p if is_prose else " " for is_prose, p in _segments(text))


def problems(text: str, *, code: bool = False) -> list[str]:
    """Short excerpts of the places fix_* would change (for the lint)."""
    fixed = fix_comments(text) if code else fix_markdown(text)
    if fixed == text:
        return []
    out = []
    for old, new in zip(text.splitlines(), fixed.splitlines()):
        if old != new:
            k = next((n for n, (a, b) in enumerate(zip(old, new)) if a != b), 0)
            out.append(old[max(0, k - 12):k + 12].strip())
    return out or [text[:24]]
