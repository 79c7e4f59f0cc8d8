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


def test_to_jsonable_makes_an_observation_json_ready_without_heavy_imports() -> None:
    code = ("import sys, json, mle_env; f = mle_env.to_jsonable; "
            f"print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in {HEAVY!r})))")
    loaded = json.loads(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                                       check=True).stdout)
    assert loaded == []


def test_to_jsonable_on_a_real_observation_shape() -> None:
    import numpy as np

    from mle_env.observation import make_observation, observation_space

    obs = make_observation(task="t", files="f", action="shell", time_left=12.5, steps_left=-1, stdout="out\n",
                           exit_code=3, timed_out=True, max_output=1000)
    with pytest.raises(TypeError):
        json.dumps(obs)
    plain = mle_env.to_jsonable(obs)
    assert json.loads(json.dumps(plain)) == {
        "task": "t", "files": "f", "action": "shell", "stdout": "out\n", "stderr": "", "exit_code": 3,
        "timed_out": 1, "message": "", "time_left": 12.5, "steps_left": -1}
    assert type(plain["exit_code"]) is int and type(plain["time_left"]) is float
    assert observation_space(1000).contains(obs)  # the original is untouched
    nested = mle_env.to_jsonable({1: (np.float32(0.5), np.arange(3)), "ok": [True, None, np.bool_(False)]})
    assert nested == {"1": [0.5, [0, 1, 2]], "ok": [True, None, False]}
    with pytest.raises(TypeError, match="cannot turn a object"):
        mle_env.to_jsonable(object())
