"""The HTML shells: one fixed document per page kind; `static/app.js` fills it from the JSON
endpoints. The only value placed into a shell is the requested path, escaped."""

from __future__ import annotations

import html

__all__ = ["KINDS", "error_page", "page"]

KINDS = ("index", "run", "proposal", "benchmark", "compare")
_TITLES = {
    "index": "runs",
    "run": "run",
    "proposal": "proposal",
    "benchmark": "benchmark",
    "compare": "comparison",
}

_SHELL = """<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>spark-jax · {title}</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="/static/uplot.min.css">
<link rel="stylesheet" href="/static/style.css">
</head>
<body data-page="{kind}">
<header><a href="/">spark-jax</a> <span class="crumb">{crumb}</span>
<span id="live" class="live">connecting…</span></header>
<main id="app"></main>
<script src="/static/uplot.min.js"></script>
<script src="/static/app.js"></script>
</body>
</html>
"""


def page(kind: str, path: str = "") -> bytes:
    """The shell of page `kind` (one of KINDS) for the run/benchmark at `path`."""
    title = _TITLES[kind] + (f" {path}" if path else "")
    crumb = f"{_TITLES[kind]} · {path}" if path else _TITLES[kind]
    return _SHELL.format(title=html.escape(title), kind=kind, crumb=html.escape(crumb)).encode()


def error_page(code: int, message: str) -> bytes:
    body = (
        "<!doctype html><html lang='en'><head><meta charset='utf-8'>"
        f"<title>{code}</title></head><body><h1>{code}</h1><p>{html.escape(message)}</p>"
        "<p><a href='/'>all runs</a></p></body></html>"
    )
    return body.encode()
