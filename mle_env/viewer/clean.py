"""Page data made inert before it leaves Python: terminal escape sequences removed from every string,
what is left of control characters spelled out (:func:`mle_env.display_text.terminal_safe`), non-finite
numbers made null, and the result written as the one line of JavaScript a data file holds."""

from __future__ import annotations

import json
import math
import re
from typing import Any

from mle_env.display_text import terminal_safe

#: ESC-introduced sequences a terminal acts on: CSI (``ESC [ ... final``), OSC / DCS / SOS / PM / APC strings
#: (ended by BEL or ``ESC \\``, or unterminated to the end of the text), and two-character escapes; the
#: one-character CSI U+009B and OSC U+009D alike
_SEQUENCES = re.compile(
    r"(?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]?"
    r"|(?:\x1b[\]PX^_]|[\x90\x98\x9d\x9e\x9f])[^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)?"
    r"|\x1b[ -/]*[0-~]"
)

#: characters of one string kept at most (an output is cut in the middle beyond it, the cut said)
MAX_TEXT = 200_000


def clean_text(text: str, limit: int = MAX_TEXT) -> str:
    """``text`` with terminal escape sequences removed (``\\x1b[31mred`` becomes ``red``), other control
    characters spelled as escapes (``\\x07``), CRLF made LF, and at most ``limit`` characters."""
    text = terminal_safe(_SEQUENCES.sub("", text))
    if len(text) > limit:
        half = limit // 2
        text = f"{text[:half]}\n[... {len(text) - 2 * half} characters cut ...]\n{text[-half:]}"
    return text


def clean(value: Any, limit: int = MAX_TEXT) -> Any:
    """``value`` (any nesting of dicts, lists and scalars) with every string, keys too, :func:`clean_text`,
    and NaN and infinities as None."""
    if isinstance(value, str):
        return clean_text(value, limit)
    if isinstance(value, bool) or value is None or isinstance(value, int):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {clean_text(str(k), 1000): clean(v, limit) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [clean(v, limit) for v in value]
    return clean_text(str(value), limit)


KEY = re.compile(r"[a-z0-9-]{1,40}")


def script(key: str, data: Any) -> bytes:
    """The data file of ``key``: ``mleView.receive("key", JSON);`` of :func:`clean` ``data``, in ASCII (every
    other character, and ``<``, ``>``, ``&``, as a JSON escape), so that no byte of the data can end the
    string or the call."""
    if not KEY.fullmatch(key):
        raise ValueError(f"not a data key: {key!r}")
    body = json.dumps(clean(data), ensure_ascii=True, allow_nan=False, separators=(",", ":"))
    # <, > and & occur only inside strings: as escapes, the file holds no markup even if read as HTML
    body = body.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
    return f'mleView.receive("{key}",{body});\n'.encode("ascii")
