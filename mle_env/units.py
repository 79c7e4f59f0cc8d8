"""Human-readable quantities."""

from __future__ import annotations


def format_bytes(nbytes: int | float | None) -> str:
    """A byte count in decimal units (1 KB = 1000 B): "812 B", "1.4 MB", "2.3 GB"; "size unknown" for None."""
    if nbytes is None:
        return "size unknown"
    value = float(nbytes)
    for unit in ("B", "KB", "MB", "GB"):
        if value < 1000:
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1000
    return f"{value:.1f} TB"


def human_bytes(nbytes: int) -> str:
    """A byte count in binary units, as sizes are given here: "10 GiB", "512 MiB", "3.07 GiB"."""
    for unit, size in (("EiB", 2**60), ("PiB", 2**50), ("TiB", 2**40), ("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if nbytes >= size:
            return f"{nbytes / size:.3g} {unit}"
    return f"{nbytes} B"
