"""Text that an agent or a data file controls, made safe to print on a terminal.

An agent writes its stdout and stderr, names its files and its submission's columns, and the messages and
grade reports quote them. Printed raw, such text can drive the user's terminal: ESC starts OSC 0 (window
title), OSC 8 (a hyperlink whose target is hidden), OSC 52 (a clipboard write) or ``ESC [2J`` (clear the
screen), U+009B is a one-character CSI, and the bidi controls reorder the text around them. Printed through
rich with markup on, ``[link=...]`` becomes a hyperlink and ``[/x]`` raises ``MarkupError``.

Every command that prints such text routes it through this module:

- :func:`terminal_safe` for text printed as is (``print``, a rich ``Text``, a file written to a terminal);
- :func:`markup_safe` for text rich reads as markup (``console.print`` of a string, a table cell or title
  given as a string);
- :func:`plain_text` for a rich ``Text`` of such text (never read as markup).

Neutralised characters are shown as their escaped Python spelling (``\\x1b``, ``\\x9b``, ``\\u202e``), so
what the agent tried stays visible and the rest of a sequence prints as ordinary text.
"""

from __future__ import annotations

import re
from typing import Any

#: characters that change what a terminal does or shows rather than printing: C0 controls but newline and
#: tab, DEL, C1 controls, the line and paragraph separators, the Unicode Bidi_Control characters and lone
#: surrogates (which cannot even be encoded)
UNSAFE_CHARACTERS = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069\ud800-\udfff]"
)


def escaped_spelling(char: str) -> str:
    """``char`` spelled as a Python escape: ``\\xNN`` below U+0100, else ``\\uNNNN``."""
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def terminal_safe(text: str) -> str:
    """``text`` with nothing a terminal would act on: every character of :data:`UNSAFE_CHARACTERS` replaced
    by its escaped spelling (ESC becomes the four characters ``\\x1b``, so ``ESC ]0;evil BEL`` prints as
    ``\\x1b]0;evil\\x07``). Newlines and tabs are kept, and a CRLF line ending counts as a newline."""
    return UNSAFE_CHARACTERS.sub(lambda m: escaped_spelling(m.group()), text.replace("\r\n", "\n"))


def markup_safe(text: str) -> str:
    """:func:`terminal_safe` ``text`` with rich markup escaped, for places where rich reads markup: it
    prints exactly as given (``[/x]`` stays ``[/x]``, ``[link=...]`` makes no hyperlink)."""
    from rich.markup import escape

    return escape(terminal_safe(text))


def plain_text(text: Any, style: str = "") -> Any:
    """A rich ``Text`` of ``str(text)`` made :func:`terminal_safe` (a ``Text`` is never read as markup)."""
    from rich.text import Text

    return Text(terminal_safe(str(text)), style=style)
