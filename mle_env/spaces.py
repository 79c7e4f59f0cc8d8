"""Gymnasium spaces for text observations and JSON actions.

Gymnasium's ``Text`` space accepts only characters of its charset (alphanumeric by default), so command
output with spaces, quotes or non-ASCII text would fall outside it. :class:`UnicodeText` accepts any
string up to a length; it samples printable ASCII. :class:`ActionSpace` contains exactly the actions the
JSON Schema in :mod:`mle_env.actions` accepts and samples harmless ones.
"""

from __future__ import annotations

import string
from typing import Any

import numpy as np
from gymnasium import spaces

from mle_env.actions import ActionError, parse_action

_PRINTABLE = string.ascii_letters + string.digits + " .,:;_-+=()[]{}/\n"


class UnicodeText(spaces.Text):
    """Any ``str`` of at most ``max_length`` characters (sampling draws printable ASCII)."""

    def __init__(self, max_length: int, *, min_length: int = 0, seed: int | np.random.Generator | None = None) -> None:
        super().__init__(max_length, min_length=min_length, charset=_PRINTABLE, seed=seed)

    def contains(self, x: Any) -> bool:
        return isinstance(x, str) and self.min_length <= len(x) <= self.max_length

    def __repr__(self) -> str:
        return f"UnicodeText({self.min_length}, {self.max_length})"

    def __eq__(self, other: Any) -> bool:
        return isinstance(other, UnicodeText) and (self.min_length, self.max_length) == (
            other.min_length, other.max_length)


class ActionSpace(spaces.Space[dict]):
    """Actions as validated by the action JSON Schema: shell, python, validate and submit dicts.

    ``contains`` also accepts a plain string (it stands for a shell action). ``sample`` returns a harmless
    action: an ``echo``, a ``print`` or a ``validate`` (never ``submit``, so sampling does not end episodes).
    """

    def __init__(self, seed: int | np.random.Generator | None = None) -> None:
        super().__init__(shape=None, dtype=None, seed=seed)

    @property
    def is_np_flattenable(self) -> bool:
        return False

    def contains(self, x: Any) -> bool:
        try:
            parse_action(x)
        except ActionError:
            return False
        return True

    def sample(self, mask: Any = None, probability: Any = None) -> dict:
        word = "".join(self.np_random.choice(list(string.ascii_lowercase), size=6))
        choice = int(self.np_random.integers(3))
        if choice == 0:
            return {"type": "shell", "code": f"echo {word}"}
        if choice == 1:
            return {"type": "python", "code": f"print({word!r})"}
        return {"type": "validate"}

    def __repr__(self) -> str:
        return "ActionSpace(shell | python | validate | submit)"

    def __eq__(self, other: Any) -> bool:
        return isinstance(other, ActionSpace)
