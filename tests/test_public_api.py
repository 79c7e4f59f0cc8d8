"""`import mle_env` stays cheap and its lazy public surface resolves (pinned like swebench's facade)."""

import json
import subprocess
import sys

import pytest

import mle_env

HEAVY = ["docker", "ray", "torch", "pandas", "sklearn", "jsonschema", "openai", "matplotlib"]


def test_import_loads_no_heavy_module() -> None:
    code = "import sys, json, mle_env; print(json.dumps(sorted(sys.modules)))"
    loaded = set(json.loads(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                                           check=True).stdout))
    assert [m for m in HEAVY if m in loaded] == []


def test_every_public_name_resolves() -> None:
    for name in mle_env.__all__:
        assert getattr(mle_env, name) is not None, name
    assert set(dir(mle_env)) == set(mle_env.__all__)


def test_unknown_attribute_raises() -> None:
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        mle_env.nope  # noqa: B018


def test_competitions_are_registered_with_gymnasium() -> None:
    import gymnasium

    spec = gymnasium.spec("mle_env/detecting-insults-in-social-commentary-v0")
    assert spec.entry_point == "mle_env.env:MLEEnv"
    assert spec.kwargs == {"competition_id": "detecting-insults-in-social-commentary"}
