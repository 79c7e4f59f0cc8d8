"""``mle-env view --bundle OUT_DIR``: the app and every piece of its data as static files, to open from
``file://`` or to put on any static host. The page is the server's, with its content security policy as a
meta tag (``frame-ancestors`` left out: browsers ignore it there and say so in the console)."""

from __future__ import annotations

import os
from pathlib import Path

from mle_env.viewer.episode import inside
from mle_env.viewer.index import ViewError, ViewIndex
from mle_env.viewer.server import CSP, static_file

#: the file that marks a folder as a bundle, so that writing a bundle again may replace it
MARKER = ".mle-env-view"
META_CSP = "; ".join(part for part in CSP.split("; ") if not part.startswith("frame-ancestors"))


def bundle_html() -> bytes:
    """The page with its policy as ``<meta http-equiv="Content-Security-Policy">``."""
    html = static_file("index.html").decode("utf-8")
    meta = f'<meta http-equiv="Content-Security-Policy" content="{META_CSP}">'
    return html.replace("<!--csp-->", meta, 1).encode("utf-8")


def write_bundle(index: ViewIndex, out: Path) -> list[str]:
    """Write the app and the data of every key into ``out``; returns the keys written.

    Raises:
        ViewError: ``out`` lies under a path being viewed (the viewer never writes there), or is a file,
            or a folder that holds other things than an earlier bundle.
    """
    out = Path(out)
    for source in index.sources:
        if inside(out, source.root):
            raise ViewError(f"--bundle {out} lies inside {source.root}, which the viewer only reads; "
                            "write the bundle elsewhere")
    if out.exists() and (not out.is_dir() or (any(out.iterdir()) and not (out / MARKER).is_file())):
        raise ViewError(f"--bundle {out} exists and is not an empty folder or an earlier bundle")
    data = out / "data"
    data.mkdir(parents=True, exist_ok=True)
    (out / MARKER).write_text("written by mle-env view --bundle\n")
    (out / "index.html").write_bytes(bundle_html())
    for name in ("app.js", "app.css"):
        (out / name).write_bytes(static_file(name))
    for old in data.glob("*.js"):
        os.unlink(old)
    written = []
    for key in index.keys():
        body = index.script(key)
        if body is not None:
            (data / f"{key}.js").write_bytes(body)
            written.append(key)
    return written
