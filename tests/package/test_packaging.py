"""The wheel ships one import name, with agents/, scaffolds/ and competitions/ inside it."""

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
import tomllib

REPO = Path(__file__).resolve().parents[2]
MAPPED = {"mle_env.agents": "agents", "mle_env.scaffolds": "scaffolds", "mle_env.competitions": "competitions"}


def _package_dirs() -> set[str]:
    found = set()
    for init in (REPO / "mle_env").rglob("__init__.py"):
        found.add(".".join(init.parent.relative_to(REPO).parts))
    for name, folder in MAPPED.items():
        for init in (REPO / folder).rglob("__init__.py"):
            rel = init.parent.relative_to(REPO / folder).parts
            found.add(".".join((name, *rel)))
    return found


def test_pyproject_lists_every_package() -> None:
    listed = set(tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    assert _package_dirs() <= listed, sorted(_package_dirs() - listed)


@pytest.mark.slow
def test_wheel_contents(tmp_path: Path) -> None:
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-w", str(tmp_path),
                    str(REPO)], check=True, capture_output=True)
    wheel = next(tmp_path.glob("mle_env-*.whl"))
    names = zipfile.ZipFile(wheel).namelist()
    tops = {n.split("/")[0] for n in names if not n.startswith("mle_env-")}
    assert tops == {"mle_env"}
    assert "mle_env/competition/schema.json" in names
    assert "mle_env/agents/__init__.py" in names
    assert "mle_env/competitions/detecting-insults-in-social-commentary/competition.toml" in names
    assert "mle_env/competitions/practice-house-prices/leaderboard.csv" in names
