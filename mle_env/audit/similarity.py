"""Code similarity between an episode's code and reference solutions the user supplies (a folder per
competition, e.g. its top public notebooks converted to .py), for the plagiarism side of the audit.

Both sides are reduced to their Python token stream with names, strings and numbers kept but comments,
blank lines and layout dropped, so that reformatting or re-commenting a copied solution does not hide it;
rapidfuzz's normalised Indel similarity of the two streams (0 to 1) is the pair's score. Files that do not
tokenise (not Python) are compared as whitespace-split words.
"""

from __future__ import annotations

import io
import tokenize
from pathlib import Path

from rapidfuzz.distance import Indel

#: pairs scoring this much or more are flagged
THRESHOLD = 0.8
_SKIP = {tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT, tokenize.ENCODING,
         tokenize.ENDMARKER}
#: characters of a file compared at most (the cost is quadratic in the length)
MAX_CHARS = 200_000


def tokens(text: str) -> list[str]:
    """The token stream of ``text`` (see the module docstring)."""
    text = text[:MAX_CHARS]
    try:
        return [t.string for t in tokenize.generate_tokens(io.StringIO(text).readline) if t.type not in _SKIP]
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return text.split()


def similarity(a: str, b: str) -> float:
    """How alike two sources are, from 0 (nothing shared) to 1 (the same tokens in the same order)."""
    return float(Indel.normalized_similarity(tokens(a), tokens(b)))


def reference_files(folder: Path) -> dict[str, str]:
    """The reference solutions in ``folder`` (``.py`` files, recursively), by path relative to it."""
    if not folder.is_dir():
        return {}
    return {p.relative_to(folder).as_posix(): p.read_text(encoding="utf-8", errors="replace")
            for p in sorted(folder.rglob("*.py")) if p.is_file()}


def similar_pairs(code: dict[str, str], references: dict[str, str],
                  threshold: float = THRESHOLD) -> list[dict[str, object]]:
    """Every (episode file, reference file) pair with its similarity, most alike first; ``flagged`` when at
    or above ``threshold``."""
    pairs = [{"file": name, "reference": ref, "similarity": round(similarity(text, ref_text), 4)}
             for name, text in sorted(code.items()) for ref, ref_text in sorted(references.items())]
    pairs.sort(key=lambda p: -float(p["similarity"]))  # type: ignore[arg-type]
    for pair in pairs:
        pair["flagged"] = float(pair["similarity"]) >= threshold  # type: ignore[arg-type]
    return pairs
