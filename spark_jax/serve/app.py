"""The HTTP side: routes, status codes and headers, on the standard library's threading server.

Pages are fixed HTML shells (`pages.py`) whose script polls the JSON endpoints and puts every
value into the document as text, so nothing a run holds (program text, LLM output) is ever
parsed as markup; a Content-Security-Policy that allows only this server's own script backs
that up. Paths in requests are relative to the served root; one that leaves it is answered
403, one that names nothing 404. GET and HEAD only: the server never changes anything.
"""

from __future__ import annotations

import http.server
import json
import pathlib
import sqlite3
import urllib.parse
from typing import Any, Callable

from spark_jax.benchmark.store import BenchmarkDBError
from spark_jax.search.schema import RunDBError
from spark_jax.serve import benchmarks, comparison, data, pages
from spark_jax.serve.reader import BadRequest, NotFound, OutsideRoot, Root

__all__ = ["STATIC", "ServeServer", "make_server"]

STATIC_DIR = pathlib.Path(__file__).with_name("static")
STATIC = {
    "app.js": "text/javascript; charset=utf-8",
    "style.css": "text/css; charset=utf-8",
    "uplot.min.js": "text/javascript; charset=utf-8",
    "uplot.min.css": "text/css; charset=utf-8",
    "uplot.LICENSE": "text/plain; charset=utf-8",
}
_CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
    "img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; "
    "frame-ancestors 'none'"
)
_LOOPBACK = ("127.0.0.1", "localhost", "::1", "[::1]")


class ServeServer(http.server.ThreadingHTTPServer):
    """A threading HTTP server that knows its root; `url` is where it answers."""

    daemon_threads = True

    def __init__(self, address: tuple[str, int], root: Root, quiet: bool = True) -> None:
        self.root, self.quiet = root, quiet
        super().__init__(address, _Handler)

    @property
    def url(self) -> str:
        host, port = self.server_address[:2]
        host = f"[{host}]" if ":" in host else host
        return f"http://{host}:{port}/"


def make_server(
    root: str | pathlib.Path, host: str = "127.0.0.1", port: int = 0, quiet: bool = True
) -> ServeServer:
    """A server for `root` bound to (host, port); port 0 picks a free one (see `.url`)."""
    return ServeServer((host, port), Root(root), quiet)


_INT64 = 2**63


def _int(value: str | None, name: str) -> int:
    """A query integer that SQLite can compare (signed 64-bit): NotFound when it is no
    integer (nothing is named so), BadRequest when it is out of SQLite's range."""
    try:
        number = int(value or "")
    except ValueError:
        raise NotFound(f"{name} must be an integer, got {(value or '')[:40]!r}") from None
    if not -_INT64 <= number < _INT64:
        raise BadRequest(f"{name} is out of range (a signed 64-bit integer)")
    return number


class _Handler(http.server.BaseHTTPRequestHandler):
    server: ServeServer
    server_version = "spark-jax-serve"
    sys_version = ""

    def log_message(self, fmt: str, *args: Any) -> None:
        if not self.server.quiet:
            super().log_message(fmt, *args)

    # ------------------------------------------------------------ responses

    def _send(self, code: int, body: bytes, ctype: str, cache: str = "no-store") -> None:
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", cache)
        self.send_header("X-Content-Type-Options", "nosniff")
        self.send_header("Referrer-Policy", "no-referrer")
        self.send_header("Content-Security-Policy", _CSP)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _json(self, code: int, value: Any) -> None:
        body = json.dumps(value, allow_nan=False).encode()
        self._send(code, body, "application/json; charset=utf-8")

    def _error(self, code: int, message: str, api: bool) -> None:
        if api:
            self._json(code, {"error": message})
        else:
            self._send(code, pages.error_page(code, message), "text/html; charset=utf-8")

    # ------------------------------------------------------------ routing

    def do_HEAD(self) -> None:
        self.do_GET()

    def do_GET(self) -> None:
        url = urllib.parse.urlsplit(self.path)
        api = url.path.startswith("/api/")
        if not self._host_ok():
            return self._error(403, "unexpected Host header", api)
        raw_path = urllib.parse.unquote(url.path)
        if ".." in raw_path.split("/") or "\\" in raw_path:
            return self._error(403, "path outside the served root", api)
        query = {k: v[-1] for k, v in urllib.parse.parse_qs(url.query).items()}
        try:
            route = self._route(raw_path)
            if route is None:
                return self._error(404, "no such page", api)
            route(query)
        except OutsideRoot:
            self._error(403, "path outside the served root", api)
        except NotFound as exc:
            self._error(404, str(exc), api)
        except BadRequest as exc:
            self._error(400, str(exc), api)
        except (RunDBError, BenchmarkDBError, sqlite3.Error) as exc:
            self._error(503, f"database not readable now: {exc}", api)
        except OSError as exc:  # e.g. ENAMETOOLONG from a name the checks let through
            self._error(400, f"path not usable: {exc.strerror or exc}", api)
        except Exception as exc:  # noqa: BLE001 - answer, never drop the connection
            self._error(500, f"internal error: {type(exc).__name__}: {exc}"[:300], api)

    def _host_ok(self) -> bool:
        """On a loopback bind, only loopback Host names (no DNS rebinding)."""
        bound = self.server.server_address[0]
        if bound not in _LOOPBACK:
            return True
        host = (self.headers.get("Host") or "").rsplit(":", 1)[0]
        return host in _LOOPBACK

    def _route(self, path: str) -> Callable[[dict], None] | None:
        root = self.server.root
        html = "text/html; charset=utf-8"
        if path.startswith("/static/"):
            name = path[len("/static/") :]
            if name not in STATIC:
                return None
            body = (STATIC_DIR / name).read_bytes()
            return lambda q: self._send(200, body, STATIC[name], cache="max-age=300")
        page_names = {"/": "index", "/run": "run", "/proposal": "proposal"}
        page_names |= {"/benchmark": "benchmark", "/compare": "compare"}
        if path in page_names:
            kind = page_names[path]

            def page(q: dict) -> None:
                if "path" in q:
                    root.resolve(q["path"])  # 403 before the page loads
                self._send(200, pages.page(kind, q.get("path", "")), html)

            return page
        api: dict[str, Callable[[dict], Any]] = {
            "/api/runs": lambda q: {
                "runs": data.runs_list(root),
                "benchmarks": benchmarks.benchmarks_list(root),
                "comparisons": comparison.comparisons_list(root),
            },
            "/api/run": lambda q: data.run_detail(root, q.get("path", "")),
            "/api/proposal": lambda q: data.proposal_detail(
                root, q.get("path", ""), _int(q.get("attempt"), "attempt")
            ),
            "/api/benchmark": lambda q: benchmarks.benchmark_detail(root, q.get("path", "")),
            "/api/compare": lambda q: comparison.compare_detail(
                root, q.get("path", ""), q.get("threshold")
            ),
        }
        if path in api:
            return lambda q: self._json(200, api[path](q))
        return None
