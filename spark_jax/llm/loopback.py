"""A real OpenAI-compatible HTTP server on 127.0.0.1, for tests and benchmarks.

  with LoopbackServer(script=[Fault('429', retry_after=2), Reply('hi')]) as srv:
      backend = OpenAIBackend(srv.base_url, 'loopback', api_key_env=None)

Each `POST /v1/chat/completions` takes the next item of the script queue; when it
is empty, `responder(body)` answers if given, else `default_reply` (a string, or a
callable `(body) -> str | Reply`). `GET /v1/models` lists the one model. Every
request (method, path, headers, parsed body) is appended to `.requests`.
"""

from __future__ import annotations

import collections
import dataclasses
import email.utils
import http.server
import json
import socket
import threading
import time
from typing import Any, Callable, Iterable, Union

__all__ = ["LoopbackServer", "Reply", "Fault", "SeenRequest", "http_date"]

_AUTO = "auto"


@dataclasses.dataclass(frozen=True)
class Reply:
    """A successful completion.

    Attributes:
      content: `message.content`.
      reasoning_content: `message.reasoning_content`, omitted if None.
      usage: the `usage` object; 'auto' computes len/4 counts, None omits it.
      finish_reason: `choices[0].finish_reason`.
    """

    content: str
    reasoning_content: str | None = None
    usage: dict[str, int] | str | None = _AUTO
    finish_reason: str = "stop"


@dataclasses.dataclass(frozen=True)
class Fault:
    """A scripted failure.

    Kinds: an HTTP status as a string ('400', '401', '429', '500', '503', ...);
    'slow' (wait `delay_s`, then send `reply` or the default reply);
    'malformed_json' (200 with a cut-off JSON body); 'empty_choices' (200 with
    `choices: []`); 'disconnect' (close the connection without answering).

    Attributes:
      kind: see above.
      retry_after: sent as the Retry-After header (number of seconds or HTTP-date).
      delay_s: wait before answering (for 'slow').
      message: error message for status faults.
      reply: the late reply of a 'slow' fault.
    """

    kind: str
    retry_after: float | str | None = None
    delay_s: float = 0.0
    message: str | None = None
    reply: Reply | None = None


ScriptItem = Union[Reply, Fault]


@dataclasses.dataclass(frozen=True)
class SeenRequest:
    """One request as the server saw it (header names lower-cased)."""

    method: str
    path: str
    headers: dict[str, str]
    body: Any


class LoopbackServer:
    """ThreadingHTTPServer on an ephemeral 127.0.0.1 port, in a daemon thread.

    Args:
      script: initial queue of `Reply`/`Fault` items, consumed one per completion.
      default_reply: answer when the queue is empty and no responder is set.
      delay_s: extra delay before every completion answer.
      responder: `(body) -> Reply | Fault` for dynamic answers (e.g. by role).
      require_key: if set, requests without `Authorization: Bearer <key>` get 401.
      model: model name reported in replies and `/v1/models`.
    """

    def __init__(
        self,
        script: Iterable[ScriptItem] | None = None,
        default_reply: str | Callable[[dict[str, Any]], str | Reply] = "ok",
        delay_s: float = 0.0,
        *,
        responder: Callable[[dict[str, Any]], ScriptItem] | None = None,
        require_key: str | None = None,
        model: str = "loopback",
    ):
        self._script: collections.deque[ScriptItem] = collections.deque(script or ())
        self.default_reply = default_reply
        self.delay_s = delay_s
        self.responder = responder
        self.require_key = require_key
        self.model = model
        self.requests: list[SeenRequest] = []
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._httpd: http.server.ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # Lifecycle ------------------------------------------------------------------

    def start(self) -> LoopbackServer:
        """Binds the port and starts serving; returns self."""
        if self._httpd is not None:
            return self
        self._stop.clear()
        self._httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _make_handler(self))
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stops serving and releases the port (slow handlers are woken up)."""
        self._stop.set()
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._httpd = self._thread = None

    def __enter__(self) -> LoopbackServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def port(self) -> int:
        if self._httpd is None:
            raise RuntimeError("server not started")
        return self._httpd.server_address[1]

    @property
    def base_url(self) -> str:
        """`http://127.0.0.1:PORT/v1`."""
        return f"http://127.0.0.1:{self.port}/v1"

    def push(self, *items: ScriptItem) -> None:
        """Appends items to the script queue."""
        with self._lock:
            self._script.extend(items)

    # Answers --------------------------------------------------------------------

    def _next(self, body: dict[str, Any]) -> ScriptItem:
        with self._lock:
            if self._script:
                return self._script.popleft()
        if self.responder is not None:
            return self.responder(body)
        return self._default(body)

    def _default(self, body: dict[str, Any]) -> Reply:
        reply = self.default_reply(body) if callable(self.default_reply) else self.default_reply
        return reply if isinstance(reply, Reply) else Reply(str(reply))

    def _completion(self, body: dict[str, Any], reply: Reply) -> dict[str, Any]:
        message: dict[str, Any] = {"role": "assistant", "content": reply.content}
        if reply.reasoning_content is not None:
            message["reasoning_content"] = reply.reasoning_content
        out: dict[str, Any] = {
            "id": f"chatcmpl-loopback-{len(self.requests)}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": body.get("model") or self.model,
            "choices": [{"index": 0, "message": message, "finish_reason": reply.finish_reason}],
        }
        if reply.usage == _AUTO:
            chars = sum(len(str(m.get("content", ""))) for m in body.get("messages", []))
            done = len(reply.content) + len(reply.reasoning_content or "")
            p, c = (chars + 3) // 4, (done + 3) // 4
            out["usage"] = {"prompt_tokens": p, "completion_tokens": c, "total_tokens": p + c}
        elif reply.usage is not None:
            out["usage"] = reply.usage
        return out


def _error_body(status: int, message: str) -> bytes:
    err = {"error": {"message": message, "type": "loopback_error", "code": status}}
    return json.dumps(err).encode()


class _Handler(http.server.BaseHTTPRequestHandler):
    """The loopback's request handler; `loopback` (the LoopbackServer it serves: its script,
    recorded requests and settings) is set by `_make_handler`'s subclass."""

    loopback: "LoopbackServer"
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # Quiet.
        del format, args

    def _send(self, status: int, payload: bytes, headers: dict[str, str] | None = None):
        try:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            for k, v in (headers or {}).items():
                self.send_header(k, v)
            self.end_headers()
            self.wfile.write(payload)
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True

    def _seen(self, body: Any) -> bool:
        headers = {k.lower(): v for k, v in self.headers.items()}
        with self.loopback._lock:
            self.loopback.requests.append(SeenRequest(self.command, self.path, headers, body))
        if self.loopback.require_key is not None:
            if headers.get("authorization") != f"Bearer {self.loopback.require_key}":
                self._send(401, _error_body(401, "invalid or missing API key"))
                return False
        return True

    def do_GET(self) -> None:
        if not self._seen(None):
            return
        if self.path.rstrip("/") == "/v1/models":
            data = {
                "object": "list",
                "data": [{"id": self.loopback.model, "object": "model", "owned_by": "loopback"}],
            }
            self._send(200, json.dumps(data).encode())
        else:
            self._send(404, _error_body(404, f"no route {self.path}"))

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            body = None
        if not self._seen(body):
            return
        if self.path.rstrip("/") != "/v1/chat/completions":
            self._send(404, _error_body(404, f"no route {self.path}"))
            return
        if not isinstance(body, dict):
            self._send(400, _error_body(400, "request body is not a JSON object"))
            return
        if self.loopback.delay_s > 0 and self.loopback._stop.wait(self.loopback.delay_s):
            return
        self._answer(body, self.loopback._next(body))

    def _answer(self, body: dict[str, Any], item: ScriptItem) -> None:
        if isinstance(item, Reply):
            self._send(200, json.dumps(self.loopback._completion(body, item)).encode())
            return
        kind = item.kind
        if kind == "slow":
            if self.loopback._stop.wait(item.delay_s):
                return
            self._answer(body, item.reply or self.loopback._default(body))
        elif kind == "malformed_json":
            self._send(200, b'{"id": "chatcmpl-x", "choices": [{"index": 0, "mess')
        elif kind == "empty_choices":
            data = {"id": "chatcmpl-x", "object": "chat.completion", "choices": []}
            self._send(200, json.dumps(data).encode())
        elif kind == "disconnect":
            self.close_connection = True
            try:
                self.connection.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        elif kind.isdigit():
            status = int(kind)
            headers = {}
            if item.retry_after is not None:
                ra = item.retry_after
                headers["Retry-After"] = ra if isinstance(ra, str) else f"{ra:g}"
            msg = item.message or f"loopback fault {status}"
            self._send(status, _error_body(status, msg), headers)
        else:
            self._send(500, _error_body(500, f"unknown fault kind {kind!r}"))


def _make_handler(server: LoopbackServer) -> type[http.server.BaseHTTPRequestHandler]:
    return type("Handler", (_Handler,), {"loopback": server})


def http_date(timestamp: float) -> str:
    """Formats a Unix time as an HTTP-date (for Retry-After tests)."""
    return email.utils.formatdate(timestamp, usegmt=True)
