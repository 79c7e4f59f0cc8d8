"""EnvConfig: every option of ``mle_env.make``, validated in one place before any sandbox starts.

``MLEEnv``, ``mle-env run/play/eval`` and evaluations all go through :class:`EnvConfig`, so an option
means the same everywhere and a bad one fails the same way: :class:`~mle_env.errors.ConfigError` (a
``ValueError``) with one line naming the option, what is allowed, and what was given::

    >>> EnvConfig(memory="lots")
    Traceback (most recent call last):
    ...
    mle_env.errors.ConfigError: memory must be a size in bytes from 16 MiB to 1 EiB: a number of bytes or a ...

Values are normalised once, here: sizes (``memory``, ``disk``) become bytes (``"4g"`` = 4 GiB, binary
units as Docker reads them), numbers become floats, ``gpus`` becomes ``None``, ``"all"``, a count or a
tuple of device ids, and paths become :class:`~pathlib.Path`. Evaluation code validates its
``env_options`` up front with :meth:`EnvConfig.from_options`.
"""

from __future__ import annotations

import dataclasses
import difflib
import math
import numbers
import os
import re
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mle_env.competition.task_text import check_task_text
from mle_env.errors import ConfigError
from mle_env.sandbox.images import DEFAULT_IMAGE
from mle_env.units import human_bytes

SANDBOXES = ("auto", "docker", "local", "unisolated")
# the names of mle_env.rewards.REWARDS (a test keeps them equal; importing it here would load pandas)
REWARD_NAMES = ("medal", "any_medal", "above_median", "percentile", "dev_improvement")

MAX_SECONDS = 365 * 24 * 3600
MAX_STEPS = 10**9
MAX_CPUS = 1024.0
MIN_CPUS = 0.01  # Docker's smallest quota
MAX_GPUS = 256
MIN_MEMORY = 16 * 2**20
MIN_DISK = 2**20
MAX_BYTES = 2**60
MIN_OUTPUT, MAX_OUTPUT = 100, 2**24
DEFAULT_DISK_FLOOR = 10 * 2**30
DEFAULT_ARTIFACTS_BYTES = 50 * 2**20
DEFAULT_ARTIFACTS_FILES = 10_000
MAX_ARTIFACTS_FILES = 1_000_000
DISK_FACTOR = 2

_UNITS = {"": 1, "k": 2**10, "m": 2**20, "g": 2**30, "t": 2**40, "p": 2**50}
_SIZE = re.compile(r"^\s*(\d+(?:\.\d*)?|\.\d+)\s*([kmgtp]?)(?:i?b)?\s*$", re.IGNORECASE)
_DEVICE_ID = re.compile(r"^(\d{1,4}|(GPU|MIG)-[A-Za-z0-9/-]{1,120})$")  # an index or a GPU/MIG UUID


def show(value: Any, limit: int = 60) -> str:
    """``repr(value)`` for an error message: cut to ``limit`` characters, and never raising."""
    try:
        text = repr(value)
    except Exception:  # noqa: BLE001 - an object whose repr raises is still described
        text = f"<{type(value).__name__} object>"
    text = "".join(c if c.isprintable() else " " for c in text)  # one line, even for a multi-line repr
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _given(value: Any) -> str:
    return f"got {show(value)}" + (f" ({type(value).__name__})" if isinstance(value, str) else "")


def _is_real(value: Any) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool) and type(value).__name__ != "bool_"


def _seconds(name: str, value: Any, optional: bool, default_note: str = "") -> float | None:
    if value is None and optional:
        return None
    allowed = f"{name} must be a number of seconds in (0, {MAX_SECONDS}]" + default_note
    if not _is_real(value):
        raise ConfigError(f"{allowed}; {_given(value)}")
    try:
        seconds = float(value)
    except (OverflowError, ValueError, TypeError):
        raise ConfigError(f"{allowed}; {_given(value)}") from None
    if not math.isfinite(seconds) or not 0 < seconds <= MAX_SECONDS:
        raise ConfigError(f"{allowed}; {_given(value)}")
    return seconds


def parse_bytes(name: str, value: Any, minimum: int = 1, maximum: int = MAX_BYTES) -> int:
    """A size in bytes from an int (bytes), a finite float, or a string like ``"4g"``, ``"512m"``, ``"1.5GiB"``,
    ``"100000"`` (binary units: k = 1024).

    Raises:
        ConfigError: not a size, or outside [minimum, maximum].
    """
    allowed = (f"{name} must be a size in bytes from {human_bytes(minimum)} to {human_bytes(maximum)}: "
               "a number of bytes or a string like '4g' or '512m'")
    if isinstance(value, str):
        match = _SIZE.match(value) if len(value) <= 64 else None
        if match is None:
            raise ConfigError(f"{allowed}; {_given(value)}")
        number = float(match.group(1)) * _UNITS[match.group(2).lower()]
    elif _is_real(value):
        try:
            number = float(value)
        except (OverflowError, ValueError, TypeError):
            raise ConfigError(f"{allowed}; {_given(value)}") from None
    else:
        raise ConfigError(f"{allowed}; {_given(value)}")
    if not math.isfinite(number) or not minimum <= number <= maximum:
        raise ConfigError(f"{allowed}; {_given(value)}")
    return int(number)


def _path(name: str, value: Any) -> Path | None:
    if value is None:
        return None
    if isinstance(value, Path):
        text = str(value)
    elif isinstance(value, (str, os.PathLike)):
        try:
            text = os.fspath(value)
        except Exception:  # noqa: BLE001 - a PathLike whose __fspath__ raises
            raise ConfigError(f"{name} must be a path (str or os.PathLike) or None; {_given(value)}") from None
    else:
        raise ConfigError(f"{name} must be a path (str or os.PathLike) or None; {_given(value)}")
    if not isinstance(text, str) or not text or "\x00" in text:
        raise ConfigError(f"{name} must be a non-empty path without NUL bytes; {_given(value)}")
    return Path(text)


def _check_writable_folder(name: str, path: Path) -> None:
    """Raise ConfigError unless ``path`` is a folder this process can create files in, or one it can create:
    probed by making (and at once removing) a folder in ``path`` or, when it does not exist yet, in its
    nearest existing parent. Nothing is left behind, whichever way the probe ends."""
    target = Path(os.path.abspath(path))
    nearest = next(p for p in (target, *target.parents) if os.path.exists(p))  # "/" always exists
    if not os.path.isdir(nearest):
        where = "it" if nearest == target else f"its parent {show(str(nearest))}"
        raise ConfigError(f"{name} must be a folder that can be created and written; {where} is not a folder; "
                          f"{_given(str(path))}")
    try:
        os.rmdir(tempfile.mkdtemp(prefix=".mle-env-probe-", dir=nearest))
    except OSError as e:
        raise ConfigError(f"{name} must be a folder that can be created and written; {show(str(nearest))} cannot "
                          f"be written ({e.strerror or type(e).__name__}); {_given(str(path))}") from None


def competition_name(value: Any) -> str:
    """``make``'s competition argument, checked: a competition id or alias (a non-empty str).

    Raises:
        ConfigError: not a str, empty, or longer than any id.
    """
    if not isinstance(value, str) or not value.strip() or len(value) > 200:
        raise ConfigError("competition must be a competition id or alias (a non-empty string such as "
                          f"'spooky-author-identification'; `mle-env list` shows them all); {_given(value)}")
    return value


def _gpus(value: Any, sandbox: str) -> str | int | tuple[str, ...] | None:
    allowed = (f"gpus must be None, 'all', a count from 0 to {MAX_GPUS}, or device ids (a list, or a string "
               "like '0,1')")
    if isinstance(value, str):
        text = value.strip()
        if text.lower() == "all":
            value = "all"
        elif text.isdigit() and len(text) <= 4:
            value = int(text)
        elif text and "," in text or _DEVICE_ID.match(text):
            value = tuple(part.strip() for part in text.split(","))
        else:
            raise ConfigError(f"{allowed}; {_given(value)}")
    if value is None or (isinstance(value, str) and value == "all"):
        gpus: Any = value
    elif isinstance(value, numbers.Integral) and not isinstance(value, bool):
        if not 0 <= value <= MAX_GPUS:
            raise ConfigError(f"{allowed}; {_given(value)}")
        gpus = int(value) or None  # 0 GPUs = none
    elif isinstance(value, Sequence) and not isinstance(value, (str, bytes, bytearray)):
        ids = tuple(str(g) if isinstance(g, numbers.Integral) and not isinstance(g, bool) else g for g in value)
        if not ids or len(ids) > MAX_GPUS or not all(isinstance(g, str) and _DEVICE_ID.match(g) for g in ids):
            raise ConfigError(f"{allowed}; {_given(value)}")
        if len(set(ids)) != len(ids):
            raise ConfigError(f"gpus lists a device twice; {_given(value)}")
        gpus = ids
    else:
        raise ConfigError(f"{allowed}; {_given(value)}")
    if gpus is not None and sandbox == "unisolated":
        raise ConfigError(
            f"gpus={show(value)} cannot be used with sandbox='unisolated' (it runs actions as plain host processes "
            "and neither passes through nor limits GPUs); use sandbox='docker' or 'local', or gpus=None"
        )
    return gpus


@dataclass(frozen=True)
class EnvConfig:
    """Every option of ``mle_env.make`` (see :mod:`mle_env.env` for what each one does).

    Attributes:
        sandbox: ``"auto"``, ``"docker"``, ``"local"`` (isolated with bubblewrap) or ``"unisolated"`` (plain
            host subprocesses; an explicit opt-in, not a security boundary).
        time_limit: seconds of wall-clock time per episode, in (0, 1 year]; None: the competition's hint,
            else 24 h. 0 and negative values are errors, never "the default".
        step_limit: steps per episode, 1 to 10^9; None: no limit.
        action_timeout: default seconds per shell/python action, in (0, 1 year].
        gpus: None (none), ``"all"``, a count (0 = none), or device ids (a tuple; a string ``"0,1"`` is
            split); not with ``sandbox="unisolated"``.
        cpus: CPU cores, in [0.01, 1024]; None: no limit.
        memory: bytes (an int, or a string like ``"4g"``, normalised to an int), at least 16 MiB; None: no limit.
        disk: bytes the agent may write (int, or a string like ``"20g"``), at least 1 MiB; ``"auto"``
            (default): the larger of 10 GiB and twice the competition's public data (:meth:`disk_bytes`);
            None: no limit.
        network: whether the sandbox has network access (a bool).
        reward: one of ``medal``, ``any_medal``, ``above_median``, ``percentile``, or a callable on the
            GradeReport.
        record_dir: where trajectories go (None: ``$MLE_ENV_HOME/trajectories``).
        image: the docker image.
        max_output: characters of stdout and of stderr kept per observation, 100 to 2^24.
        leaderboard: a leaderboard CSV to grade against instead of the installed one.
        home: the cache folder (None: ``$MLE_ENV_HOME`` or ``~/.cache/mle-env``).
        artifacts_max_bytes: bytes of ``./code`` and ``./logs`` (together) kept in the episode's folder at its
            end (an int or a string like ``"50m"``; default 50 MiB; 0 keeps neither).
        artifacts_max_files: files of each of ``./code`` and ``./logs`` kept at most (default 10,000; 0 to
            1,000,000): what is past it is left out and listed in ``TRUNCATED.txt``.
        dev_split: None (default: MLE-bench's task), or the fraction in (0, 1) of the public training rows
            held out as a dev set for ``score_dev`` (:mod:`mle_env.devset`); ``reward="dev_improvement"``
            needs it.
        task_text: the description the task starts with: ``"original"`` (default), ``"obfuscated"``, or
            MLE-bench's own from a checkout, ``"mlebench:PATH"`` / ``"mlebench-obfuscated:PATH"``
            (:mod:`mle_env.competition.task_text`); ``./data/description.md`` says the same.
        log_test_scores: grade every file given to validate or score_dev, and the submission after each step
            that changed it, on the test answers, into a host-side log the agent never sees
            (:mod:`mle_env.test_score_log`); default False.

    Raises:
        ConfigError: on construction, for the first option that is malformed or out of range.
    """

    sandbox: str = "auto"
    time_limit: float | None = None
    step_limit: int | None = None
    action_timeout: float = 1800.0
    gpus: str | int | tuple[str, ...] | None = None
    cpus: float | None = None
    memory: int | str | None = "4g"
    disk: int | str | None = "auto"
    network: bool = False
    reward: str | Callable[..., float] = "medal"
    record_dir: str | os.PathLike[str] | None = None
    image: str = DEFAULT_IMAGE
    max_output: int = 16_000
    leaderboard: str | os.PathLike[str] | None = None
    home: str | os.PathLike[str] | None = field(default=None)
    artifacts_max_bytes: int | str = DEFAULT_ARTIFACTS_BYTES
    artifacts_max_files: int = DEFAULT_ARTIFACTS_FILES
    dev_split: float | None = None
    task_text: str = "original"
    log_test_scores: bool = False

    def __post_init__(self) -> None:
        def put(name: str, value: Any) -> None:
            object.__setattr__(self, name, value)

        if not isinstance(self.sandbox, str) or self.sandbox not in SANDBOXES:
            raise ConfigError(f"sandbox must be one of {', '.join(map(repr, SANDBOXES))}; {_given(self.sandbox)}")
        put("time_limit", _seconds("time_limit", self.time_limit, True, " (or None for the competition's default)"))
        put("step_limit", _step_limit("step_limit", self.step_limit))
        put("action_timeout", _seconds("action_timeout", self.action_timeout, False))
        put("gpus", _gpus(self.gpus, self.sandbox))
        if self.cpus is not None:
            allowed = f"cpus must be a number of cores in [{MIN_CPUS}, {MAX_CPUS:g}] (or None for no limit)"
            if not _is_real(self.cpus):
                raise ConfigError(f"{allowed}; {_given(self.cpus)}")
            try:
                cpus = float(self.cpus)
            except (OverflowError, ValueError, TypeError):
                raise ConfigError(f"{allowed}; {_given(self.cpus)}") from None
            if not math.isfinite(cpus) or not MIN_CPUS <= cpus <= MAX_CPUS:
                raise ConfigError(f"{allowed}; {_given(self.cpus)}")
            put("cpus", cpus)
        if self.memory is not None:
            put("memory", parse_bytes("memory", self.memory, MIN_MEMORY))
        if self.disk is not None and not (isinstance(self.disk, str) and self.disk == "auto"):
            put("disk", parse_bytes("disk", self.disk, MIN_DISK))
        if not isinstance(self.network, bool):
            raise ConfigError(f"network must be True or False; {_given(self.network)}")
        if not callable(self.reward) and not (isinstance(self.reward, str) and self.reward in REWARD_NAMES):
            raise ConfigError(f"reward must be one of {', '.join(REWARD_NAMES)} or a callable on the GradeReport; "
                              f"{_given(self.reward)}")
        put("record_dir", _path("record_dir", self.record_dir))
        if self.record_dir is not None:
            _check_writable_folder("record_dir", self.record_dir)
        if (not isinstance(self.image, str) or not 0 < len(self.image) <= 255
                or any(c.isspace() or ord(c) < 32 for c in self.image)):
            raise ConfigError(f"image must be a docker image name like 'mle-env-agent:cpu'; {_given(self.image)}")
        allowed = f"max_output must be a whole number of characters from {MIN_OUTPUT} to {MAX_OUTPUT}"
        if not isinstance(self.max_output, numbers.Integral) or isinstance(self.max_output, bool):
            raise ConfigError(f"{allowed}; {_given(self.max_output)}")
        if not MIN_OUTPUT <= self.max_output <= MAX_OUTPUT:
            raise ConfigError(f"{allowed}; {_given(self.max_output)}")
        put("max_output", int(self.max_output))
        put("leaderboard", _path("leaderboard", self.leaderboard))
        put("home", _path("home", self.home))
        put("artifacts_max_bytes", parse_bytes("artifacts_max_bytes", self.artifacts_max_bytes, 0))
        allowed = f"artifacts_max_files must be a whole number of files from 0 to {MAX_ARTIFACTS_FILES:,}"
        if (not isinstance(self.artifacts_max_files, numbers.Integral) or isinstance(self.artifacts_max_files, bool)
                or not 0 <= self.artifacts_max_files <= MAX_ARTIFACTS_FILES):
            raise ConfigError(f"{allowed}; {_given(self.artifacts_max_files)}")
        put("artifacts_max_files", int(self.artifacts_max_files))
        if self.dev_split is not None:
            allowed = "dev_split must be a fraction of the training rows in (0, 1), or None for no dev split"
            if not _is_real(self.dev_split) or not 0 < self.dev_split < 1:
                raise ConfigError(f"{allowed}; {_given(self.dev_split)}")
            put("dev_split", float(self.dev_split))
        elif isinstance(self.reward, str) and self.reward == "dev_improvement":
            raise ConfigError("reward='dev_improvement' needs a dev split: pass dev_split=0.1 (or another fraction)")
        put("task_text", check_task_text(self.task_text))
        if not isinstance(self.log_test_scores, bool):
            raise ConfigError(f"log_test_scores must be True or False; {_given(self.log_test_scores)}")

    # -- building ----------------------------------------------------------------------------------------
    @classmethod
    def from_options(cls, options: Mapping[str, Any] | None = None, **overrides: Any) -> EnvConfig:
        """The config of ``mle_env.make(id, **options)``, validated; for evaluations and the CLI.

        ``max_episode_steps`` (Gymnasium's name) is accepted and lowers ``step_limit`` to it, as in ``make``.

        Raises:
            ConfigError: an unknown option (with the closest known one) or a bad value.
        """
        if options is not None and not isinstance(options, Mapping):
            raise ConfigError(f"env options must be a mapping of option names to values; {_given(options)}")
        merged = {**(options or {}), **overrides}
        known = [f.name for f in dataclasses.fields(cls)]
        for key in merged:
            if key not in known and key != "max_episode_steps":
                near = difflib.get_close_matches(str(key), known, n=1)
                raise ConfigError(f"unknown env option {show(key)}" + (f"; did you mean {near[0]!r}?" if near else "")
                                  + f" (options: {', '.join(known)})")
        steps = merged.pop("max_episode_steps", None)
        config = cls(**merged)
        return config.with_max_episode_steps(steps) if steps is not None else config

    def with_max_episode_steps(self, steps: Any) -> EnvConfig:
        """This config with Gymnasium's ``max_episode_steps`` turned into the graded step budget (the
        smaller of it and ``step_limit``)."""
        n = _step_limit("max_episode_steps", steps)
        assert n is not None
        return dataclasses.replace(self, step_limit=n if self.step_limit is None else min(n, self.step_limit))

    def to_options(self) -> dict[str, Any]:
        """Keyword arguments of ``mle_env.make`` that rebuild this config (JSON-ready but for a callable
        reward): sizes in bytes, paths as strings, gpus as a list."""
        out: dict[str, Any] = {}
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            if isinstance(value, Path):
                value = str(value)
            elif isinstance(value, tuple):
                value = list(value)
            out[f.name] = value
        return out

    # -- derived -----------------------------------------------------------------------------------------
    def disk_bytes(self, public_bytes: int | None) -> int | None:
        """The disk limit for a competition whose public data is ``public_bytes``: the given one, or with
        ``"auto"`` the larger of 10 GiB and twice the public data."""
        if self.disk != "auto":
            return self.disk  # type: ignore[return-value]
        return max(DEFAULT_DISK_FLOOR, DISK_FACTOR * int(public_bytes or 0))

    def gpu_request(self) -> str | int | list[str] | None:
        """``gpus`` as :class:`~mle_env.sandbox.base.SandboxLimits` takes it."""
        return list(self.gpus) if isinstance(self.gpus, tuple) else self.gpus


def _step_limit(name: str, value: Any) -> int | None:
    if value is None and name == "step_limit":
        return None
    allowed = f"{name} must be a whole number of steps from 1 to {MAX_STEPS}" + (
        " (or None for no limit)" if name == "step_limit" else "")
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        if _is_real(value) and isinstance(value, float) and value.is_integer():
            value = int(value)
        else:
            raise ConfigError(f"{allowed}; {_given(value)}")
    if not 1 <= value <= MAX_STEPS:
        raise ConfigError(f"{allowed}; {_given(value)}")
    return int(value)


__all__ = ["SANDBOXES", "EnvConfig", "competition_name", "parse_bytes", "show"]
