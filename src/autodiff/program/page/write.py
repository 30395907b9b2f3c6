"""A Page as one HTML file: page.html with its style, its script, the drawing and the data in it.

What the program's author wrote (names, the file's name, the source text) never becomes markup:
the data goes in a `<script type="application/json">` with `<`, `>` and `&` written as JSON
escapes (so no `</script>` can end it early), the script builds the page from it with
`textContent`, and the drawing's text is already escaped (program/svg.py). A
Content-Security-Policy lets the page run only its own script and style (by their hashes) and
fetch nothing at all.
"""

from __future__ import annotations

import base64
import hashlib
import html
import json
import re
from importlib import resources

from ..svg import STYLE as SVG_STYLE

_MARKER = re.compile(r"\{\{(title|csp|style|svg|data|script)\}\}")


def _asset(name: str) -> str:
    return resources.files(__package__).joinpath(name).read_text(encoding="utf-8")


def _hash(text: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode("ascii") + "'"


def embedded_json(data) -> str:
    """JSON to sit inside a <script> element: nothing in it can close the element or open a comment."""
    text = json.dumps(data, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def inline_svg(svg: str) -> str:
    """The drawing as part of a page: no XML declaration, and no style of its own (the page's
    stylesheet colours it, in the page's theme)."""
    svg = svg.split("\n", 1)[1] if svg.startswith("<?xml") else svg
    return svg.replace(f"<style>{SVG_STYLE}</style>\n", "", 1)


def page_html(page) -> str:
    style, script = _asset("page.css"), _asset("page.js")
    csp = (f"default-src 'none'; script-src {_hash(script)}; style-src {_hash(style)}; "
           "base-uri 'none'; form-action 'none'")
    parts = {
        "title": html.escape(f"autodiff: the chain rule of {page.source}"),
        "csp": csp,
        "style": style,
        "svg": inline_svg(page.svg),
        "data": embedded_json(page.data()),
        "script": script,
    }
    return _MARKER.sub(lambda match: parts[match.group(1)], _asset("page.html"))


def framed(document: str, height: int = 720) -> str:
    """A page inside another (a notebook's output): in a frame of its own, so that its style,
    script and keys stay its own."""
    return (f'<iframe class="autodiff-page" title="autodiff: the chain rule, step by step" '
            f'style="width: 100%; height: {height}px; border: 1px solid rgba(128, 128, 128, 0.4)" '
            f'srcdoc="{html.escape(document, quote=True)}"></iframe>')
