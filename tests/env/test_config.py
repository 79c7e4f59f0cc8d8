"""EnvConfig: every option of make checked in one place, each bad value one line naming it and its range.

Issue 10's cases each have a row below (time_limit=0 no longer means 3600 s, negative limits, memory="lots",
cpus=-1, NaN/inf/huge values, gpus= with the unisolated sandbox), plus the other ways an option can be
malformed; then what valid values normalise to, and that make, gymnasium.make and the CLI go through it
before anything starts.
"""

from __future__ import annotations

import dataclasses
import inspect
import math
import os
from pathlib import Path

import gymnasium
import numpy as np
import pytest

import mle_env
from mle_env.config import REWARD_NAMES, SANDBOXES, EnvConfig, parse_bytes
from mle_env.errors import ConfigError


class Unprintable:
    def __repr__(self) -> str:
        raise RuntimeError("no repr")

    __str__ = __repr__


HUGE = 10**400
BAD_OPTIONS = [
    # (options, the phrase the one-line message must contain)
    ({"time_limit": 0}, "time_limit must be a number of seconds in (0, 31536000]"),
    ({"time_limit": -1}, "time_limit must be a number of seconds"),
    ({"time_limit": -0.0}, "time_limit must be a number of seconds"),
    ({"time_limit": math.nan}, "got nan"),
    ({"time_limit": math.inf}, "got inf"),
    ({"time_limit": -math.inf}, "got -inf"),
    ({"time_limit": HUGE}, "time_limit must be a number of seconds"),
    ({"time_limit": 1e300}, "time_limit must be a number of seconds"),
    ({"time_limit": "3600"}, "got '3600' (str)"),
    ({"time_limit": True}, "time_limit must be a number of seconds"),
    ({"step_limit": 0}, "step_limit must be a whole number of steps from 1 to 1000000000"),
    ({"step_limit": -5}, "step_limit must be a whole number of steps"),
    ({"step_limit": 2.5}, "got 2.5"),
    ({"step_limit": math.nan}, "step_limit must be a whole number of steps"),
    ({"step_limit": True}, "got True"),
    ({"step_limit": HUGE}, "step_limit must be a whole number of steps"),
    ({"step_limit": "10"}, "got '10' (str)"),
    ({"action_timeout": 0}, "action_timeout must be a number of seconds in (0, 31536000]"),
    ({"action_timeout": -30}, "action_timeout must be a number of seconds"),
    ({"action_timeout": math.nan}, "action_timeout must be a number of seconds"),
    ({"action_timeout": None}, "action_timeout must be a number of seconds"),
    ({"memory": "lots"}, "memory must be a size in bytes from 16 MiB to 1 EiB"),
    ({"memory": "4x"}, "memory must be a size in bytes"),
    ({"memory": "-4g"}, "memory must be a size in bytes"),
    ({"memory": -1}, "memory must be a size in bytes"),
    ({"memory": 0}, "memory must be a size in bytes"),
    ({"memory": 1000}, "memory must be a size in bytes from 16 MiB"),
    ({"memory": math.nan}, "memory must be a size in bytes"),
    ({"memory": math.inf}, "memory must be a size in bytes"),
    ({"memory": HUGE}, "memory must be a size in bytes"),
    ({"memory": "9" * 500}, "memory must be a size in bytes"),
    ({"memory": Unprintable()}, "got <Unprintable object>"),
    ({"disk": 0}, "disk must be a size in bytes from 1 MiB"),
    ({"disk": "lots"}, "disk must be a size in bytes"),
    ({"disk": -(2**30)}, "disk must be a size in bytes"),
    ({"disk": "automatic"}, "disk must be a size in bytes"),
    ({"cpus": -1}, "cpus must be a number of cores in [0.01, 1024]"),
    ({"cpus": 0}, "cpus must be a number of cores"),
    ({"cpus": math.nan}, "cpus must be a number of cores"),
    ({"cpus": math.inf}, "cpus must be a number of cores"),
    ({"cpus": HUGE}, "cpus must be a number of cores"),
    ({"cpus": "2"}, "got '2' (str)"),
    ({"gpus": 1, "sandbox": "unisolated"}, "gpus=1 cannot be used with sandbox='unisolated'"),
    ({"gpus": "all", "sandbox": "unisolated"}, "cannot be used with sandbox='unisolated'"),
    ({"gpus": ["0"], "sandbox": "unisolated"}, "cannot be used with sandbox='unisolated'"),
    ({"gpus": -1}, "gpus must be None, 'all', a count from 0 to 256"),
    ({"gpus": 10**6}, "gpus must be None, 'all', a count"),
    ({"gpus": "lots"}, "gpus must be None"),
    ({"gpus": []}, "gpus must be None"),
    ({"gpus": ["0", "0"]}, "gpus lists a device twice"),
    ({"gpus": True}, "gpus must be None"),
    ({"gpus": 1.5}, "gpus must be None"),
    ({"sandbox": "Docker"}, "sandbox must be one of 'auto', 'docker', 'local', 'unisolated'; got 'Docker'"),
    ({"sandbox": "bwrap"}, "sandbox must be one of"),
    ({"sandbox": None}, "sandbox must be one of"),
    ({"network": "false"}, "network must be True or False; got 'false' (str)"),
    ({"network": 1}, "network must be True or False"),
    ({"reward": "gold"},
     "reward must be one of medal, any_medal, above_median, percentile, dev_improvement or a callable"),
    ({"reward": 3}, "reward must be one of"),
    ({"record_dir": ""}, "record_dir must be a non-empty path"),
    ({"record_dir": 3}, "record_dir must be a path"),
    ({"home": "a\x00b"}, "home must be a non-empty path without NUL bytes"),
    ({"leaderboard": object()}, "leaderboard must be a path"),
    ({"image": ""}, "image must be a docker image name"),
    ({"image": "mle env"}, "image must be a docker image name"),
    ({"image": None}, "image must be a docker image name"),
    ({"max_output": 0}, "max_output must be a whole number of characters from 100 to 16777216"),
    ({"max_output": 10**9}, "max_output must be a whole number of characters"),
    ({"max_output": 1500.0}, "max_output must be a whole number of characters"),
]


@pytest.mark.parametrize(("options", "phrase"), BAD_OPTIONS, ids=[str(i) for i in range(len(BAD_OPTIONS))])
def test_every_bad_option_is_one_line_naming_it(options: dict, phrase: str) -> None:
    with pytest.raises(ConfigError) as raised:
        EnvConfig(**options)
    message = str(raised.value)
    assert phrase in message
    assert "\n" not in message and len(message) < 400
    assert message.startswith(next(iter(options)))  # names the argument first
    assert isinstance(raised.value, ValueError)


@pytest.mark.parametrize(("options", "phrase"), [
    ({"time_limt": 60}, "unknown env option 'time_limt'; did you mean 'time_limit'?"),
    ({"gpu": 1}, "did you mean 'gpus'?"),
    ({"max_episode_steps": 0}, "max_episode_steps must be a whole number of steps from 1"),
    ({"max_episode_steps": 2.5}, "max_episode_steps must be a whole number of steps"),
    ({"max_episode_steps": -1}, "max_episode_steps must be a whole number of steps"),
])
def test_from_options_rejects_unknown_names_and_bad_step_budgets(options: dict, phrase: str) -> None:
    with pytest.raises(ConfigError, match=phrase.replace("?", r"\?")):
        EnvConfig.from_options(options)


def test_from_options_needs_a_mapping() -> None:
    with pytest.raises(ConfigError, match="env options must be a mapping"):
        EnvConfig.from_options(["sandbox", "local"])  # type: ignore[arg-type]


def test_valid_values_are_normalised_once() -> None:
    config = EnvConfig(memory="512m", disk="20g", gpus="0,1", cpus=np.float64(2), step_limit=np.int64(5),
                       time_limit=60, action_timeout=np.float32(30), record_dir="runs", max_output=np.int64(2000))
    assert config.memory == 512 * 2**20 and config.disk == 20 * 2**30 and config.gpus == ("0", "1")
    assert config.cpus == 2.0 and type(config.cpus) is float
    assert config.step_limit == 5 and type(config.step_limit) is int
    assert config.time_limit == 60.0 and config.action_timeout == 30.0 and config.max_output == 2000
    assert config.record_dir == Path("runs")
    assert config.gpu_request() == ["0", "1"]
    assert EnvConfig(gpus="2").gpus == 2 and EnvConfig(gpus=0).gpus is None and EnvConfig(gpus="ALL").gpus == "all"
    assert EnvConfig(gpus=[0, 1]).gpus == ("0", "1")
    assert EnvConfig(step_limit=10.0).step_limit == 10
    assert EnvConfig(memory=None).memory is None and EnvConfig(disk=None).disk is None
    assert EnvConfig(sandbox="unisolated").sandbox == "unisolated"
    reward = lambda report: 1.0  # noqa: E731
    assert EnvConfig(reward=reward).reward is reward


@pytest.mark.parametrize(("text", "expected"), [
    ("4g", 4 * 2**30), ("4G", 4 * 2**30), ("4gb", 4 * 2**30), ("4GiB", 4 * 2**30), ("512m", 512 * 2**20),
    ("1.5g", 3 * 2**29), ("100000", 100_000), (" 2 t ", 2 * 2**40), ("64k", 65536), (2**30, 2**30), (1e9, 10**9),
])
def test_parse_bytes(text: object, expected: int) -> None:
    assert parse_bytes("memory", text) == expected


def test_disk_default_follows_the_public_data() -> None:
    config = EnvConfig()
    assert config.disk == "auto"
    assert config.disk_bytes(10**6) == 10 * 2**30  # at least 10 GiB
    assert config.disk_bytes(50 * 2**30) == 100 * 2**30  # else twice the public data
    assert EnvConfig(disk="5g").disk_bytes(50 * 2**30) == 5 * 2**30
    assert EnvConfig(disk=None).disk_bytes(50 * 2**30) is None


def test_max_episode_steps_lowers_the_step_limit() -> None:
    assert EnvConfig.from_options({}, max_episode_steps=7).step_limit == 7
    assert EnvConfig.from_options({"step_limit": 5}, max_episode_steps=7).step_limit == 5
    assert EnvConfig.from_options({"step_limit": 50, "max_episode_steps": 7}).step_limit == 7


def test_to_options_round_trips() -> None:
    config = EnvConfig(sandbox="docker", memory="2g", disk="30g", gpus="0,1", record_dir="runs", time_limit=600)
    options = config.to_options()
    assert options["memory"] == 2 * 2**30 and options["gpus"] == ["0", "1"] and options["record_dir"] == "runs"
    assert EnvConfig.from_options(options) == config
    import json

    json.dumps(options)  # JSON-ready (for results.jsonl and config.json)


def test_config_is_frozen() -> None:
    with pytest.raises(dataclasses.FrozenInstanceError):
        EnvConfig().time_limit = 5  # type: ignore[misc]


def test_names_match_the_rest_of_the_package() -> None:
    from mle_env.rewards import REWARDS
    from mle_env.sandbox import BACKENDS

    assert REWARD_NAMES == tuple(REWARDS)
    assert set(SANDBOXES) <= set(BACKENDS)


def test_mlenv_keywords_are_exactly_the_config_fields_with_the_same_defaults() -> None:
    parameters = inspect.signature(mle_env.MLEEnv.__init__).parameters
    fields = {f.name: f.default for f in dataclasses.fields(EnvConfig)}
    keywords = {name: p.default for name, p in parameters.items() if name not in ("self", "competition_id",
                                                                                  "render_mode")}
    assert keywords == fields


# --- make, gymnasium.make and MLEEnv check options before anything else --------------------------------
@pytest.mark.parametrize("options", [{"time_limit": 0}, {"memory": "lots"}, {"cpus": -1}, {"step_limit": -1},
                                     {"gpus": 1, "sandbox": "unisolated"}, {"max_episode_steps": 0},
                                     {"time_limit": math.nan}, {"disk": "lots"}])
def test_make_checks_options_before_the_registry_or_the_data(home: Path, options: dict) -> None:
    # nothing is prepared in `home`: a ConfigError (not NotPrepared) shows the options were checked first
    with pytest.raises(ConfigError):
        mle_env.make("house-prices", **options)
    with pytest.raises(ConfigError):
        mle_env.make("no-such-competition", **options)


def test_gymnasium_make_and_the_env_class_check_options_too(home: Path) -> None:
    with pytest.raises(ConfigError, match="time_limit must be"):
        gymnasium.make("mle_env/practice-house-prices-v0", time_limit=0)
    with pytest.raises(ConfigError, match="memory must be"):
        mle_env.MLEEnv("practice-house-prices", memory="lots")
    with pytest.raises(ConfigError, match="render_mode must be one of"):
        mle_env.MLEEnv("practice-house-prices", render_mode="rgb_array")


# --- issue 12: wrong types and paths are one-line ConfigErrors too, never TypeError or a failure at reset ---
def one_line_config_error(call, *args, **kwargs) -> str:
    """The message of the ConfigError that ``call`` raises (any other exception fails the test)."""
    with pytest.raises(ConfigError) as raised:
        call(*args, **kwargs)
    message = str(raised.value)
    assert "\n" not in message and message.isprintable() and len(message) < 400, message
    return message


@pytest.mark.parametrize("competition", [5, None, 3.5, ["house-prices"], b"house-prices", "", "   ", "x" * 500,
                                         object()])
def test_make_names_the_competition_argument_when_it_is_no_id(home: Path, competition: object) -> None:
    for call in (lambda: mle_env.make(competition), lambda: mle_env.make(competition=competition)):
        message = one_line_config_error(call)
        assert message.startswith("competition must be a competition id or alias"), message


def wrong_values() -> list[object]:
    """Values no option takes: a list of them is a separate case (gpus takes device ids)."""
    import pandas as pd

    return [object(), {}, {"a": 1}, b"4g", 1 + 2j, Unprintable(), np.array([0, 1]), np.array([]),
            pd.Series([1, 2]), BadEquality(), lambda: None]


class BadEquality:
    """An object whose == raises (the check must not compare it with anything)."""

    def __eq__(self, other: object) -> bool:
        raise RuntimeError("no ==")

    __hash__ = object.__hash__


NUMERIC = ("time_limit", "step_limit", "action_timeout", "cpus", "memory", "disk", "max_output",
           "artifacts_max_bytes", "artifacts_max_files", "dev_split")


@pytest.mark.parametrize("name", [f.name for f in dataclasses.fields(EnvConfig)])
def test_every_option_rejects_wrong_types_in_one_line(name: str) -> None:
    values = wrong_values()
    if name in NUMERIC:
        values += [math.nan, math.inf, -math.inf, -1, 10**400, -(10**400), True, [1], "lots"]
    for value in values:
        if name == "reward" and callable(value):
            continue  # a callable is a reward function
        message = one_line_config_error(EnvConfig, **{name: value})
        assert message.startswith(name), message


def test_record_dir_must_be_creatable_and_writable_at_make(home: Path, tmp_path: Path) -> None:
    (tmp_path / "a-file").write_text("x")
    for bad, phrase in (("/proc/self/x", "'/proc/self' cannot be written"),
                        ("/proc/self/x/y", "'/proc/self' cannot be written"),
                        (tmp_path / "a-file", "it is not a folder"),
                        (tmp_path / "a-file" / "below", "its parent")):
        before = sorted(os.listdir(tmp_path))
        message = one_line_config_error(mle_env.make, "practice-house-prices", record_dir=bad)
        assert message.startswith("record_dir must be a folder that can be created and written") and phrase in message
        assert sorted(os.listdir(tmp_path)) == before  # the check leaves nothing behind
    readonly = tmp_path / "readonly"
    readonly.mkdir(mode=0o555)
    if os.geteuid() != 0:  # root writes in it anyway
        one_line_config_error(EnvConfig, record_dir=readonly / "runs")
    assert EnvConfig(record_dir=tmp_path / "new" / "runs").record_dir == tmp_path / "new" / "runs"
    assert sorted(os.listdir(tmp_path)) == ["a-file", "readonly"]  # created at the first episode, not here
