"""The data of an AIDE journal's page (``scaffolds/aide/journal.py``): every node with its status (buggy,
valid, best), its place in the drawn tree, the line diff of its code against its parent's, and the best
validation score against time and against the number of nodes."""

from __future__ import annotations

import difflib
from pathlib import Path
from typing import Any

from mle_env.jsonl import read_jsonl

MAX_DIFF_LINES = 3000


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _diff(parent: str, child: str) -> list[str]:
    lines = list(difflib.unified_diff(parent.splitlines(), child.splitlines(), "parent", "node", lineterm="", n=3))
    return lines[:MAX_DIFF_LINES] + ([f"[... {len(lines) - MAX_DIFF_LINES} lines cut ...]"]
                                     if len(lines) > MAX_DIFF_LINES else [])


def _layout(nodes: list[dict[str, Any]]) -> None:
    """Give each node ``x`` (leaves in order, a parent centred over its children) and ``y`` (its depth).
    Iterative, and each node placed once, so a deep chain of debug nodes or a hand-made journal whose
    parents loop cannot recurse without end."""
    ids = {n["id"] for n in nodes}
    children: dict[Any, list[int]] = {}
    for i, n in enumerate(nodes):
        children.setdefault(n["parent"] if n["parent"] in ids and n["parent"] != n["id"] else None, []).append(i)
    next_x = 0.0
    placed: set[int] = set()
    for root in children.get(None, []):
        stack: list[tuple[int, int, bool]] = [(root, 0, False)]
        while stack:
            i, depth, done = stack.pop()
            node = nodes[i]
            kids = [k for k in children.get(node["id"], []) if k not in placed]
            if done:
                xs = [nodes[k]["x"] for k in node.pop("_kids") if "x" in nodes[k]]
                node["x"] = (xs[0] + xs[-1]) / 2 if xs else next_x
                if not xs:
                    next_x += 1
                continue
            if i in placed:
                continue
            placed.add(i)
            node["y"] = depth
            if not kids:
                node["x"] = next_x
                next_x += 1
                continue
            node["_kids"] = kids
            stack.append((i, depth, True))
            stack.extend((k, depth + 1, False) for k in reversed(kids))
    for n in nodes:  # a node in a loop of parents (a hand-made journal) is put aside, not lost
        if "x" not in n:
            n["x"], n["y"] = next_x, 0
            next_x += 1
        n.pop("_kids", None)


def tree_data(path: Path, episode_key: str | None = None) -> dict[str, Any]:
    """The page data of the journal at ``path``."""
    records = [r for r in read_jsonl(path) if isinstance(r, dict)]
    header = next((r for r in records if r.get("type") == "header"), {})
    metric = header.get("metric") if isinstance(header.get("metric"), dict) else {}
    lower = bool(metric.get("lower_is_better"))
    raw = [r for r in records if r.get("type") == "node"]
    code_of = {r.get("id"): str(r.get("code") or "") for r in raw}
    nodes = []
    for r in raw:
        repairs = r.get("repairs") if isinstance(r.get("repairs"), dict) else None
        llm = [c for c in r.get("llm") or [] if isinstance(c, dict)]
        cut = r.get("output_cut") or 0
        output = str(r.get("output_head") or "") + (f"\n[... {cut} characters cut ...]\n" if cut else "") + str(
            r.get("output_tail") or "")
        parent = r.get("parent")
        nodes.append({
            "id": r.get("id"), "parent": parent, "operator": r.get("operator"), "plan": r.get("plan") or "",
            "code": code_of.get(r.get("id"), ""), "output": output, "score": _number(r.get("score")),
            "fold_scores": r.get("fold_scores") or [], "buggy": bool(r.get("buggy", True)),
            "bug_reason": r.get("bug_reason") or "", "failure": r.get("failure") or "",
            "validation": r.get("validation") or "", "exit_code": r.get("exit_code"),
            "timed_out": bool(r.get("timed_out")), "run_time_s": _number(r.get("run_time_s")),
            "created_at": _number(r.get("created_at")), "promoted": bool(r.get("promoted")),
            "test_score": r.get("test_score") if isinstance(r.get("test_score"), dict) else None,
            "dev_score": r.get("dev_score"),
            "llm": {"calls": len(llm), "prompt_tokens": sum(int(_number(c.get("prompt_tokens")) or 0) for c in llm),
                    "completion_tokens": sum(int(_number(c.get("completion_tokens")) or 0) for c in llm)},
            "repairs": {"fired": [str(x.get("name")) for x in repairs.get("fired") or [] if isinstance(x, dict)],
                        "diff": str(repairs.get("diff") or "")} if repairs else None,
            "diff": _diff(code_of[parent], code_of.get(r.get("id"), "")) if parent in code_of else None,
        })
    good = [n for n in nodes if not n["buggy"] and n["score"] is not None]
    promoted = [n for n in nodes if n["promoted"]]
    best = promoted[-1] if promoted else (min if lower else max)(good, key=lambda n: n["score"]) if good else None
    for n in nodes:
        n["status"] = "best" if n is best else "buggy" if n["buggy"] else "valid"
    _layout(nodes)
    return {"kind": "tree", "path": str(path), "competition_id": header.get("competition_id"),
            "metric": metric, "lower_is_better": lower, "nodes": nodes, "best": best["id"] if best else None,
            "curve": _curve(nodes, lower), "episode_key": episode_key}


def _curve(nodes: list[dict[str, Any]], lower: bool) -> list[dict[str, Any]]:
    """The best validation score so far after each node (in the journal's order): its count, the seconds
    since the first node was created, and the best score (None until a node scores)."""
    start = next((n["created_at"] for n in nodes if n["created_at"] is not None), None)
    best: float | None = None
    out = []
    for count, n in enumerate(nodes, 1):
        if not n["buggy"] and n["score"] is not None:
            best = n["score"] if best is None else (min if lower else max)(best, n["score"])
        seconds = n["created_at"] - start if n["created_at"] is not None and start is not None else None
        out.append({"nodes": count, "seconds": seconds, "best": best})
    return out
