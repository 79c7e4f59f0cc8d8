"""The viewer's web server (stdlib ``http.server``): the app's three static files and the data files of the
index, nothing else. A request's path is matched against fixed names and the data key pattern, never joined
onto the filesystem; every answer carries the content security policy and ``nosniff``. Requests whose Host
header is not the server's own address are refused (a web page elsewhere cannot read the data through a
DNS name rebound to 127.0.0.1), unless the server was started for other machines (``allow_remote``).
"""

from __future__ import annotations

import ipaddress
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib import resources
from typing import Any
from urllib.parse import urlsplit

from mle_env.viewer.index import ViewIndex

CSP = ("default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; object-src 'none'; "
       "base-uri 'none'; frame-ancestors 'none'")
STATIC = {"/": ("index.html", "text/html; charset=utf-8"), "/index.html": ("index.html", "text/html; charset=utf-8"),
          "/app.js": ("app.js", "text/javascript; charset=utf-8"), "/app.css": ("app.css", "text/css; charset=utf-8")}
_DATA = re.compile(r"/data/([a-z0-9-]{1,40})\.js")


def static_file(name: str) -> bytes:
    """One of the app's files (``index.html``, ``app.js``, ``app.css``) from the package."""
    return resources.files("mle_env.viewer").joinpath("static", name).read_bytes()


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


class _Handler(BaseHTTPRequestHandler):
    server: ViewServer
    server_version = "mle-env-view"
    sys_version = ""

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base class's name
        if self.server.verbose:
            super().log_message(format, *args)

    def _send(self, status: int, body: bytes, content_type: str = "text/plain; charset=utf-8",
              head: bool = False) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Content-Security-Policy", CSP)
        self.send_header("X-Content-Type-Options", "nosniff")
        self.send_header("Referrer-Policy", "no-referrer")
        self.send_header("Cache-Control", "no-store")
        self.send_header("Cross-Origin-Resource-Policy", "same-origin")
        self.end_headers()
        if not head:
            self.wfile.write(body)

    def _answer(self, head: bool) -> None:
        if not self.server.host_allowed(self.headers.get("Host", "")):
            self._send(403, b"forbidden: unknown Host\n", head=head)
            return
        path = urlsplit(self.path).path
        if path in STATIC:
            name, kind = STATIC[path]
            self._send(200, static_file(name), kind, head)
            return
        match = _DATA.fullmatch(path)
        body = self.server.data(match.group(1)) if match else None
        if body is None:
            self._send(404, b"not found\n", head=head)
            return
        self._send(200, body, "text/javascript; charset=utf-8", head)

    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        self._answer(head=False)

    def do_HEAD(self) -> None:  # noqa: N802
        self._answer(head=True)


class ViewServer(ThreadingHTTPServer):
    """Serves ``index`` at ``host:port`` (port 0: any free one; see :attr:`url`)."""

    daemon_threads = True

    def __init__(self, index: ViewIndex, host: str = "127.0.0.1", port: int = 0, allow_remote: bool = False,
                 verbose: bool = False) -> None:
        self.index, self.allow_remote, self.verbose = index, allow_remote, verbose
        self._lock = threading.Lock()
        self._cache: dict[str, bytes] = {}
        super().__init__((host, port), _Handler)

    @property
    def url(self) -> str:
        host, port = self.server_address[:2]
        shown = f"[{host}]" if ":" in str(host) else str(host)
        return f"http://{shown}:{port}/"

    def host_allowed(self, header: str) -> bool:
        if self.allow_remote:
            return True
        host, _, port = header.rpartition(":") if not header.endswith("]") else (header, "", "")
        return is_loopback(host) and port == str(self.server_address[1])

    def data(self, key: str) -> bytes | None:
        """The data file of ``key``; the manifest and the search text are kept once built, episodes and trees
        are read again on each request (a run still going shows its new steps)."""
        if key == "index" or key.startswith("s"):
            with self._lock:
                if key not in self._cache:
                    body = self.index.script(key)
                    if body is None:
                        return None
                    self._cache[key] = body
                return self._cache[key]
        return self.index.script(key)
