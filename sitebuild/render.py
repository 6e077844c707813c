"""One notebook as HTML for the static reading edition: markdown, highlighted code, saved outputs.

Outputs are shown as saved: text joined from nbformat's lists of lines, ANSI colours of tracebacks
turned into spans (nbconvert's ansi2html), images written next to the pages as files (so a page's
first screen does not wait for them) with the size the notebook gives them. Headings get the id
JupyterLab gives them (tools/indexing.heading_anchor), so every `#anchor` the notebooks use lands.
Math ($…$) becomes MathML at build time: no script, no font download.
"""

from __future__ import annotations

import base64
import hashlib
import html
import re
import struct
import urllib.parse
from dataclasses import dataclass, field
from pathlib import Path

from latex2mathml.converter import convert as latex_to_mathml
from markdown_it import MarkdownIt
from mdit_py_plugins.dollarmath import dollarmath_plugin
from nbconvert.filters.ansi import ansi2html, strip_ansi
from pygments import highlight
from pygments.formatters import HtmlFormatter
from pygments.lexers import PythonLexer

from coursemodel.contract import GENERIC_HEADINGS

#: the order JupyterLab picks a representation in (the first one a cell has is shown)
MIME_ORDER = ("text/html", "text/markdown", "image/svg+xml", "image/png", "image/jpeg", "text/latex", "text/plain")
SCHEME = re.compile(r"^[a-z][a-z0-9+.-]*:", re.I)
#: Chinese characters and full-width punctuation: no space belongs between two of them
WIDE = re.compile(r"[\u3000-\u303f\u3400-\u9fff\uff00-\uffef]")
FORMATTER = HtmlFormatter(nowrap=True)


def joined(value) -> str:
    """nbformat text (a string or a list of lines) as one string."""
    return "".join(value) if isinstance(value, list) else (value or "")


def output_text(out: dict) -> str | None:
    """The text a reader sees for one output, or None when it is not shown as text (image, HTML)."""
    kind = out.get("output_type")
    if kind == "stream":
        return strip_ansi(joined(out.get("text")))
    if kind == "error":
        return strip_ansi("\n".join(out.get("traceback", [])))
    data = out.get("data", {})
    mime = next((m for m in MIME_ORDER if m in data), None)
    return strip_ansi(joined(data[mime])) if mime == "text/plain" else None


def anchor_of(text: str) -> str:
    """JupyterLab's heading id: the heading's text content with spaces as '-'."""
    return text.strip().replace(" ", "-")


def _plain(tokens) -> str:
    out = []
    for t in tokens or []:
        if t.type in ("text", "code_inline", "math_inline"):
            out.append(t.content)
        elif t.children:
            out.append(_plain(t.children))
    return "".join(out)


def _math(content: str, display: bool) -> str:
    try:
        return latex_to_mathml(content, display="block" if display else "inline")
    except Exception:   # an unsupported command: show the TeX, never fail the build
        return f'<code class="tex">{html.escape(content)}</code>'


@dataclass
class Links:
    """Where a page's relative links go: notebooks to their pages, other files to GitHub."""

    page_dir: str            # the notebook's folder relative to content/ ("入门")
    github: str = ""         # https://github.com/OWNER/NAME/blob/BRANCH/
    known: set = field(default_factory=set)   # notebooks under content/, relative paths

    def rewrite(self, href: str) -> tuple[str, bool]:
        """(new href, external?) for a link in a notebook of `page_dir`."""
        if not href or href.startswith("#"):
            return href, False
        if SCHEME.match(href) or href.startswith("//"):
            return href, not href.startswith("mailto:")
        path, _, frag = href.partition("#")
        target = urllib.parse.unquote(path)
        resolved = _normalize(f"{self.page_dir}/{target}" if self.page_dir else target)
        if resolved in self.known:
            page = path[: -len(".ipynb")] + ".html"
            return page + (f"#{frag}" if frag else ""), False
        if resolved.startswith("../"):              # README.md, CONTRIBUTING.md, tools/…
            return self.github + urllib.parse.quote(resolved[3:]) + (f"#{frag}" if frag else ""), True
        return self.github + "content/" + urllib.parse.quote(resolved) + (f"#{frag}" if frag else ""), True


def _normalize(path: str) -> str:
    parts: list[str] = []
    for p in path.split("/"):
        if p in ("", "."):
            continue
        if p == ".." and parts and parts[-1] != "..":
            parts.pop()
        else:
            parts.append(p)
    return "/".join(parts)


def markdown_renderer(links: Links) -> MarkdownIt:
    """markdown-it (CommonMark + tables + strikethrough, raw HTML kept) with the course's rules."""
    md = MarkdownIt("commonmark", {"html": True}).enable(["table", "strikethrough"])
    md.use(dollarmath_plugin, allow_space=True, double_inline=True,
           renderer=lambda content, opts: _math(content, bool(opts.get("display_mode"))))

    def heading_open(self, tokens, idx, options, env):
        tok = tokens[idx]
        text = _plain(tokens[idx + 1].children).strip()
        ident = anchor_of(text)
        if tok.tag == "h2":
            env["section"] = ident
        elif text in GENERIC_HEADINGS and env.get("section"):
            # 课程讲解 / 课程代码 repeat in every section: their own id, under the section's, so a link
            # (a search hit) lands in the right section; the notebooks never link to them
            ident = f"{env['section']}--{ident}"
        env.setdefault("headings", []).append((int(tok.tag[1]), text, ident))
        return f'<{tok.tag} id="{html.escape(ident, quote=True)}">'

    def heading_close(self, tokens, idx, options, env):
        ident = env["headings"][-1][2]
        # the "#" is drawn by CSS: not part of the heading's text (search titles, copy)
        return (f'<a class="anchor" href="#{html.escape(ident, quote=True)}" aria-label="本节链接"></a>'
                f"</{tokens[idx].tag}>\n")

    def link_open(self, tokens, idx, options, env):
        tok = tokens[idx]
        href, external = links.rewrite(tok.attrGet("href") or "")
        tok.attrSet("href", href)
        if external:
            tok.attrSet("target", "_blank")
            tok.attrSet("rel", "noopener")
        return self.renderToken(tokens, idx, options, env)

    def softbreak(self, tokens, idx, options, env):
        # a line break inside a paragraph shows as a space; between two Chinese characters that
        # space is wrong (「表的每个元素 都当成」), so there it is dropped
        before = tokens[idx - 1].content[-1:] if idx > 0 else ""
        after = tokens[idx + 1].content[:1] if idx + 1 < len(tokens) else ""
        return "" if WIDE.match(before) and WIDE.match(after) else "\n"

    def table_open(self, tokens, idx, options, env):
        return '<div class="scroll"><table>\n'

    def table_close(self, tokens, idx, options, env):
        return "</table></div>\n"

    for name, rule in (("heading_open", heading_open), ("heading_close", heading_close),
                       ("link_open", link_open), ("table_open", table_open), ("table_close", table_close),
                       ("softbreak", softbreak)):
        md.add_render_rule(name, rule)
    return md


class ImageStore:
    """Writes output images as files named by their content; returns their site-relative path."""

    def __init__(self, folder: Path, url: str = "img/"):
        self.folder, self.url = folder, url
        self.written: dict[str, int] = {}

    def save(self, data: bytes, ext: str) -> str:
        name = hashlib.sha256(data).hexdigest()[:16] + "." + ext
        if name not in self.written:
            self.folder.mkdir(parents=True, exist_ok=True)
            (self.folder / name).write_bytes(data)
            self.written[name] = len(data)
        return self.url + name


def png_size(data: bytes) -> tuple[int, int] | None:
    """(width, height) from a PNG header."""
    if data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR":
        return struct.unpack(">II", data[16:24])
    return None


def _pre(classes: str, text: str) -> str:
    """A text output in <pre>. HTML drops a newline right after <pre>, so a text that starts with one gets it twice."""
    lead = "\n" if text.startswith("\n") else ""
    return f'<pre class="{classes}" data-output="text">{lead}{ansi2html(text)}</pre>'


def render_output(out: dict, md: MarkdownIt, images: ImageStore, root: str) -> str:
    """One saved output as HTML, marked with its kind (the tests compare its text with the notebook's)."""
    kind = out.get("output_type")
    if kind == "stream":
        cls = "stderr" if out.get("name") == "stderr" else "stdout"
        return _pre(f"output text {cls}", joined(out.get("text")))
    if kind == "error":
        return ('<pre class="output text error" data-output="text">'
                f'{ansi2html(chr(10).join(out.get("traceback", [])))}</pre>')
    data, meta = out.get("data", {}), out.get("metadata", {})
    mime = next((m for m in MIME_ORDER if m in data), None)
    if mime is None:
        return ""
    value = joined(data[mime])
    if mime == "text/plain":
        return _pre("output text", value)
    if mime == "text/html":
        return f'<div class="output html scroll" data-output="html">{value}</div>'
    if mime == "text/markdown":
        return f'<div class="output markdown" data-output="markdown">{md.render(value)}</div>'
    if mime == "text/latex":
        return f'<div class="output math" data-output="math">{_math(value.strip().strip("$"), True)}</div>'
    raw = value.encode() if mime == "image/svg+xml" else base64.b64decode(value)
    src = root + images.save(raw, {"image/png": "png", "image/jpeg": "jpg", "image/svg+xml": "svg"}[mime])
    size = meta.get(mime, {}) if isinstance(meta.get(mime), dict) else {}
    w, h = size.get("width"), size.get("height")
    if not w and mime == "image/png" and (wh := png_size(raw)):
        w, h = wh
    dims = f' width="{int(w)}"' + (f' height="{int(h)}"' if h else "") if w else ""
    alt = "运行上面的代码画出的图"
    return (f'<div class="output image" data-output="image"><img src="{html.escape(src, quote=True)}"{dims} '
            f'alt="{alt}" loading="lazy" decoding="async"></div>')


def render_code(source: str) -> str:
    """Python source, highlighted by Pygments (classes; the colours are in the page's CSS)."""
    return f'<pre class="code"><code>{highlight(source, PythonLexer(), FORMATTER)}</code></pre>'


def pygments_css() -> str:
    """Light and dark colours for highlighted code, scoped to pre.code."""
    light = HtmlFormatter(style="default").get_style_defs("pre.code")
    dark = HtmlFormatter(style="github-dark").get_style_defs("pre.code")
    return f"{light}\n@media screen and (prefers-color-scheme: dark) {{\n{dark}\n}}\n"  # print stays light
