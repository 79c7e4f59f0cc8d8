"""The package's import graph: no cycle anywhere, and every import goes down the layers, in the order the data
flows (see "Architecture" in the README). Every import statement counts, including those inside functions
and under ``if TYPE_CHECKING:``: a cycle that only type checkers see still means neither module can be read
alone.

The graph is read with ``ast`` from the four source folders that ship as ``mle_env`` (mle_env/, agents/,
scaffolds/, competitions/, mapped as pyproject.toml maps them); a new folder there must be added to
``SOURCES``, and a new top-level module to ``LAYERS``.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
#: import name -> folder
SOURCES = {"mle_env": "mle_env", "mle_env.agents": "agents", "mle_env.scaffolds": "scaffolds",
           "mle_env.competitions": "competitions"}

#: lowest first; a module belongs to the layer of its longest listed prefix (``mle_env`` alone is the package's
#: own __init__, not a prefix) and may import only modules of its own layer or lower ones
LAYERS: list[tuple[str, tuple[str, ...]]] = [
    ("foundation: errors, units, paths, safe display, JSON lines, archive readers, metric functions, RLE masks",
     ("mle_env.errors", "mle_env.units", "mle_env.paths", "mle_env.display_text", "mle_env.jsonl",
      "mle_env.version", "mle_env.formatting", "mle_env.archives", "mle_env.grading.metrics",
      "mle_env.grading.rle")),
    ("competition: specs and the registry", ("mle_env.competition",)),
    ("grading: validation, the grader, leaderboards, medals", ("mle_env.grading",)),
    ("prepare: raw files to public and private data", ("mle_env.prepare",)),
    ("competitions: each folder's own prepare, metric and reference code; mle-env new, which writes folders",
     ("mle_env.competitions", "mle_env.reference", "mle_env.reference_solution", "mle_env.reference_population",
      "mle_env.authoring")),
    ("sandbox: where actions run", ("mle_env.sandbox",)),
    ("env: the Gymnasium episode", (
        "mle_env.config", "mle_env.actions", "mle_env.spaces", "mle_env.observation", "mle_env.rewards",
        "mle_env.recording", "mle_env.trajectory", "mle_env.devset", "mle_env.artifacts", "mle_env.forking",
        "mle_env.disclosure", "mle_env.test_score_log",
        "mle_env.env", "mle_env.episode", "mle_env.gym_registration", "mle_env.replay", "mle_env.text_interface")),
    ("policies: the bundled agents and scaffolds", ("mle_env.agents", "mle_env.scaffolds")),
    ("evaluation: many episodes, results, reports, the audit", ("mle_env.evaluation", "mle_env.audit")),
    ("front ends: the package's lazy API, the CLI, RL integrations, export",
     ("mle_env", "mle_env.__main__", "mle_env.cli", "mle_env.integrations", "mle_env.export", "mle_env.viewer")),
]


def modules() -> dict[str, Path]:
    found = {}
    for package, folder in SOURCES.items():
        for path in sorted((REPO / folder).rglob("*.py")):
            parts = list(path.relative_to(REPO / folder).with_suffix("").parts)
            if package == "mle_env" and parts[0] in ("agents", "scaffolds", "competitions"):
                continue
            if parts[-1] == "__init__":
                parts.pop()
            found[".".join([package, *parts])] = path
    return found


def imports(name: str, path: Path, known: dict[str, Path]) -> set[str]:
    """The known modules that ``name`` imports (a name imported from a package counts as its module when it
    is one, else as the package)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    targets = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            candidates = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parent = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(parent + ([node.module] if node.module else []))
            candidates = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in known else base
                          for alias in node.names]
        else:
            continue
        for target in candidates:
            while target and target not in known:
                target = target.rpartition(".")[0]
            if target and target != name:
                targets.add(target)
    return targets


def layer_of(name: str) -> int:
    best, index = "", -1
    for i, (_, prefixes) in enumerate(LAYERS):
        for prefix in prefixes:
            covers = name == prefix or (prefix != "mle_env" and name.startswith(prefix + "."))
            if covers and len(prefix) > len(best):
                best, index = prefix, i
    return index


def graph() -> dict[str, set[str]]:
    known = modules()
    return {name: imports(name, path, known) for name, path in known.items()}


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found = []
    for root in sorted(edges):
        if root in index:
            continue
        work = [(root, iter(sorted(edges[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_the_graph_is_read_whole() -> None:
    edges = graph()
    assert len(edges) > 150 and "mle_env.agents.human" in edges and "mle_env.scaffolds.aide" in edges
    assert "mle_env.sandbox.base" in edges["mle_env.sandbox.docker"]
    assert "mle_env.prepare.helpers" in edges["mle_env.prepare.runner"]  # a from-import of a name


def test_no_import_cycle() -> None:
    assert cycles(graph()) == []


def test_every_module_has_a_layer() -> None:
    assert [name for name in graph() if layer_of(name) < 0] == []


def test_imports_go_down_the_layers() -> None:
    upward = sorted(f"{name} ({LAYERS[layer_of(name)][0].split(':')[0]}) imports {target} "
                    f"({LAYERS[layer_of(target)][0].split(':')[0]})"
                    for name, targets in graph().items() for target in targets if layer_of(target) > layer_of(name))
    assert upward == []


@pytest.mark.parametrize("ring", [["a", "b"], ["a", "b", "c"]])
def test_the_cycle_finder_finds_rings(ring: list[str]) -> None:
    edges = {node: {ring[(i + 1) % len(ring)]} for i, node in enumerate(ring)}
    edges["d"] = {"a"}
    assert cycles(edges) == [sorted(ring)]
    assert cycles({"a": {"b"}, "b": set()}) == []
