"""Chinese punctuation in Chinese prose (GB/T 15834): full-width `,:;?!()` and `。` next to Chinese text.

Code, math, URLs, HTML tags, English phrases and calls stay as they are. One rule set serves the
fixer (tools/zh_punct.py: markdown, code comments and one-line Chinese strings of the notebooks and of
content/jaxcourse, README, CONTRIBUTING) and the lint (`zh-punctuation`), so what the lint reports is
exactly what the fixer would change. Strings change marks only, never blanks: they are often compared
with printed output.
"""

from __future__ import annotations

import ast
import io
import re
import textwrap
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
    r"(?P<code>(?<!`)(`+)(?!`)[\s\S]*?(?<!`)\2(?!`))"  # inline code: a whole backtick run, closed by an equal one
    r"|(?P<math>\$\$[\s\S]+?\$\$|(?<![\\$])\$(?=\S)[^$\n]+?(?<=\S)\$(?!\d))"  # $$…$$ and $…$
    r"|(?P<target>\]\((?:[^()\s]|\([^()\s]*\))*\))"  # a link target ](…), one level of parens inside
    r"|(?P<ref>^\s*\[[^\]]+\]:.*$)"  # a reference definition [x]: url
    r"|(?P<url><?https?://[^\s<>)\]]+>?)"  # bare or <auto> links
    r"|(?P<html></?[A-Za-z][^<>\n]*>|<!--[\s\S]*?-->)"  # HTML tags and comments
    r"|(?P<image>!\[)"  # image marker: the ! is not an exclamation
    r"|(?P<entity>&[a-zA-Z]+;|&#\d+;)",
    re.M,
)
#: an English gloss in parentheses after a term in a Chinese sentence: "SGD(SGD with momentum)", "SGD(DP-SGD)";
#: a single lower-case name stays a call or math: f(x), sum(axis)
_GLOSS = re.compile(r"[A-Za-z][A-Za-z\-]*(?: [A-Za-z\-]+)+|[A-Z][A-Za-z0-9\-]+")
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
    """Whether Chinese comes first from i in direction step, across a name or code on the same line
    (`pyenv;JAX 0.12 不支持`: both sides are Chinese sentences, so the mark is Chinese). Two English
    words in a row are an English phrase ("single program, multiple data"): its marks stay."""
    j = i + step
    words, in_word = 0, False
    while 0 <= j < len(s) and abs(j - i) <= reach and s[j] != "\n":
        c = s[j]
        if _ZH.match(c):
            return True
        if not (c.isalnum() or c in " \t.-_/%" + _SKIP):
            return False
        if c.isascii() and c.isalpha():
            words += not in_word
            in_word = True
        elif c in " \t":
            in_word = False
        if words >= 2:
            return False
        j += step
    return False


def _near(s, i: int, step: int, skip: str = " \t*") -> str:
    """Nearest character from i on the same line past the skip characters (blanks and `*` emphasis by
    default; code spans are not skipped); '' at the line's end."""
    j = i + step
    while 0 <= j < len(s) and s[j] in skip:
        j += step
    return s[j] if 0 <= j < len(s) and s[j] != "\n" else ""


def _fix_prose(flat: str, prose: list[bool], drop_blanks: bool = True) -> tuple[str, list[bool]]:
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
            if not (_is_zh(before) and _near(flat, i, +1, " \t") == ""):
                continue
        elif ch == "!" and _near(flat, i, +1, " \t") == "[":
            continue
        elif ch == ":":  # only its own neighbours decide: "NameError: {msg}" stays, "注意: x" does not
            if not (_is_zh(_near(out, i, -1)) or _is_zh(_near(flat, i, +1))):
                continue
        elif not (_is_zh(before) or _is_zh(after) or (_han_side(out, i, -1) and _han_side(flat, i, +1))):
            continue
        out[i] = FULL[ch]
        for step in (-1, 1) if drop_blanks else ():  # full-width marks carry their own space
            if _near(flat, i, step, " \t") in ("|", ""):
                continue  # a table's cell border keeps its padding; so do indentation and line ends
            j = i + step
            while 0 <= j < len(flat) and flat[j] in " \t" and prose[j]:
                keep[j] = False
                j += step
    return "".join(c for c, k in zip(out, keep) if k), [p for p, k in zip(prose, keep) if k]


def _call_name(flat: str, j: int) -> bool:
    """Whether "(" at j follows a lower-case name, as a call does: len(BUCKETS), where(x)."""
    m = re.search(r"([A-Za-z_][A-Za-z0-9_.]*)$", flat[:j])
    return bool(m) and m.group(1)[:1].islower()


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
            if _call_name(flat, j):
                continue  # grad(本地损失), len(BUCKETS): a call, even with Chinese inside
            if _ZH.search(inner.replace(_CODE, "")) or _is_zh(_neighbour(flat, j, -1)) \
                    or (_GLOSS.fullmatch(inner) and _han_side(flat, j, -1)):
                chosen.update((i, j))
    return chosen


def fix_markdown(text: str, *, drop_blanks: bool = True) -> str:
    """text with standard Chinese punctuation in its Chinese prose (idempotent: repeated to a fixed point,
    since one full-width mark can make its neighbour Chinese)."""
    for _ in range(8):
        fixed = _fix_once(text, drop_blanks)
        if fixed == text:
            break
        text = fixed
    return text


def _fix_once(text: str, drop_blanks: bool = True) -> str:
    parts = list(_segments(text))
    flat = "".join(p if is_prose else _mask(p) for is_prose, p in parts)
    prose = [c for is_prose, p in parts for c in [is_prose] * len(p)]
    fixed, kept = _fix_prose(flat, prose, drop_blanks)
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


#: a line whose comment holds this keeps its strings as they are (a UI name such as the kernel's)
KEEP_PRAGMA = "zh-punct: keep"
_FIELD = re.compile(r"\{[^{}\n]*\}")  # a format field {x:.3f} in a string is code


def _chinese_spans(source: str):
    """(start, end, kind) offsets of the comments and string literals that hold Chinese (f-strings whole)."""
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
    except (tokenize.TokenError, SyntaxError, IndentationError):
        return []
    starts = [0]
    for line in source.splitlines(keepends=True):
        starts.append(starts[-1] + len(line))

    def offset(pos):
        return starts[pos[0] - 1] + pos[1]

    spans, depth, opened = [], 0, None
    fstring_start = getattr(tokenize, "FSTRING_START", None)
    fstring_end = getattr(tokenize, "FSTRING_END", None)
    for tok in tokens:
        if tok.type == fstring_start:
            depth += 1
            opened = offset(tok.start) if depth == 1 else opened
        elif tok.type == fstring_end:
            depth -= 1
            if depth == 0:
                spans.append((opened, offset(tok.end), "string"))
        elif depth == 0 and tok.type in (tokenize.COMMENT, tokenize.STRING):
            spans.append((offset(tok.start), offset(tok.end), "comment" if tok.type == tokenize.COMMENT else "string"))
    keep = {n for n, line in enumerate(source.splitlines()) if KEEP_PRAGMA in line}
    out = []
    for a, b, kind in spans:
        if not _HAN.search(source[a:b]) or (kind == "string" and source.count("\n", 0, a) in keep):
            continue
        if kind == "string":
            kind = _string_kind(source[a:b])
        if kind:
            out.append((a, b, kind))
    return out


_LITERAL_HEAD = re.compile(r"""([rRuUfFbB]*)('{3}|"{3}|'|")""")


def _string_kind(literal: str) -> str | None:
    """'string' for text, 'code' for a triple-quoted literal that holds Python (run_python's probes), None for bytes."""
    m = _LITERAL_HEAD.match(literal)
    if not m or "b" in m.group(1).lower():
        return None
    if len(m.group(2)) == 3:  # triple-quoted: fixed only when it is plain Python code (a probe for run_python)
        if "f" in m.group(1).lower():
            return None
        try:
            compile(textwrap.dedent(literal[m.end():-3]), "<string>", "exec", flags=ast.PyCF_ONLY_AST)
        except SyntaxError:
            return None
        return "code"
    return "string"


def _fix_comment(comment: str) -> str:
    """A comment's Chinese prose fixed; a `#:` attribute-doc marker stays as it is."""
    marker = "#:" if comment.startswith("#:") else "#"
    return marker + fix_markdown(comment[len(marker):])


def _fix_string(literal: str) -> str:
    """A string literal's Chinese prose fixed; its format fields, escapes, quotes and blanks left alone
    (a string is often compared with printed output, where print() puts the blanks back)."""
    fields = _FIELD.findall(literal)
    masked = _FIELD.sub("`\x01`", literal)  # fields become code spans, restored in order below
    fixed = fix_markdown(masked, drop_blanks=False)
    for field in fields:
        fixed = fixed.replace("`\x01`", field, 1)
    return fixed


def _fix_embedded(code: str) -> str:
    """fix_code for code held in a string, which may be indented as a whole (a probe inside a function)."""
    if textwrap.dedent(code) == code:
        return fix_code(code)
    wrapped = fix_code("if 1:\n" + code)  # an indented block parses under a header line
    return wrapped[len("if 1:\n"):] if wrapped.startswith("if 1:\n") else code


def fix_code(source: str) -> str:
    """Python source with Chinese punctuation fixed in its comments and in the Chinese text of its strings
    (what a reader sees printed); code is untouched, and a result that would not compile is not used."""
    out = source
    for a, b, kind in reversed(_chinese_spans(source)):
        piece = out[a:b]
        if kind == "code":  # the code inside: its comments and strings, as for any cell
            head = _LITERAL_HEAD.match(piece).end()
            fixed = piece[:head] + _fix_embedded(piece[head:-3]) + piece[-3:]
        else:
            fixed = _fix_comment(piece) if kind == "comment" else _fix_string(piece)
        out = out[:a] + fixed + out[b:]
    if out != source:
        try:
            compile(out, "<fix_code>", "exec", flags=ast.PyCF_ONLY_AST)
        except SyntaxError:
            return source
    return out


def prose_text(text: str, *, code: bool = False) -> str:
    """The prose of markdown (code, math, URLs and tags dropped), or of a code cell's comments and strings."""
    if code:
        text = "\n".join(text[a:b] for a, b, _ in _chinese_spans(text))
    return "".join(p if is_prose else " " for is_prose, p in _segments(text))


def problems(text: str, *, code: bool = False) -> list[str]:
    """Short excerpts of the places fix_* would change (for the lint)."""
    fixed = fix_code(text) if code else fix_markdown(text)
    if fixed == text:
        return []
    out = []
    for old, new in zip(text.splitlines(), fixed.splitlines()):
        if old != new:
            k = next((n for n, (a, b) in enumerate(zip(old, new)) if a != b), 0)
            out.append(old[max(0, k - 12):k + 12].strip())
    return out or [text[:24]]
