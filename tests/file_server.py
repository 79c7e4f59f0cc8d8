"""A loopback HTTP server of fixed files, for tests of downloads (a PyPI index, a Zenodo record)."""

from __future__ import annotations

import http.server
import threading
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def file_server(files: dict[str, bytes], requests: list[str] | None = None) -> Iterator[str]:
    """Serve ``GET path`` with ``files[path]`` (the query string ignored; 404 for any other path) on
    127.0.0.1 until the block ends; yields the base URL. Paths asked for are appended to ``requests``.
    ``files`` may change while the server runs."""

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 - http.server's naming
            if requests is not None:
                requests.append(self.path)
            body = files.get(self.path.split("?")[0])
            self.send_response(200 if body is not None else 404)
            self.end_headers()
            self.wfile.write(body or b"")

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_port}"
    finally:
        server.shutdown()
