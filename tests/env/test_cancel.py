"""Cancelling a running action (a person's Ctrl-C in ``mle-env play``): the action stops soon, its step says
so, and the episode goes on; python keeps its state when the cell stops on KeyboardInterrupt."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

import pytest


def step_cancelled_after(env: Any, action: dict[str, Any], delay: float = 1.0) -> tuple[dict[str, Any], float]:
    """Run ``action`` and cancel it from another thread after ``delay`` s; returns its observation and the
    step's wall time."""
    timer = threading.Timer(delay, env.unwrapped.cancel_action)
    began = time.monotonic()
    timer.start()
    try:
        obs, *_ = env.step(action)
    finally:
        timer.cancel()
    return obs, time.monotonic() - began


@pytest.mark.slow
def test_a_cancelled_shell_action_stops_and_the_episode_goes_on(open_env: Callable[..., Any]) -> None:
    env = open_env()
    obs, took = step_cancelled_after(env, {"type": "shell", "code": "echo started; sleep 120; echo never",
                                           "timeout": 300})
    assert took < 60  # the action would take 120 s; a cancel ends it within its grace
    assert obs["exit_code"] == 130 and not obs["timed_out"]
    assert "started" in obs["stdout"] and "never" not in obs["stdout"]
    assert "cancelled (Ctrl-C)" in obs["message"]
    obs, *_ = env.step({"type": "shell", "code": "echo next"})  # a cancel applies to that one action only
    assert obs["exit_code"] == 0 and obs["stdout"] == "next\n" and "cancelled" not in obs["message"]


@pytest.mark.slow
def test_a_shell_action_with_its_output_redirected_is_cancelled_too(open_env: Callable[..., Any]) -> None:
    env = open_env()  # the program closed the pipes the worker reads: the cancel must still reach it
    obs, took = step_cancelled_after(env, {"type": "shell", "code": "exec >/dev/null 2>&1; sleep 120",
                                           "timeout": 300})
    assert took < 60 and obs["exit_code"] == 130 and "cancelled (Ctrl-C)" in obs["message"]


def test_a_shell_action_that_ignores_sigint_is_killed(open_env: Callable[..., Any]) -> None:
    env = open_env()
    obs, took = step_cancelled_after(env, {"type": "shell", "code": "trap '' INT; sleep 120 & wait; echo never",
                                           "timeout": 300})
    assert took < 60 and obs["exit_code"] == 130 and "never" not in obs["stdout"]


def test_a_cancelled_python_cell_keeps_the_interpreter(open_env: Callable[..., Any]) -> None:
    env = open_env()
    env.step({"type": "python", "code": "x = 41"})
    obs, took = step_cancelled_after(env, {"type": "python", "code": "import time\nwhile True: time.sleep(0.1)",
                                           "timeout": 300})
    assert took < 60 and obs["exit_code"] == 1 and "KeyboardInterrupt" in obs["stderr"]
    assert "cancelled (Ctrl-C): the cell was interrupted" in obs["message"]
    obs, *_ = env.step({"type": "python", "code": "x + 1"})
    assert obs["stdout"].strip() == "42" and "lost" not in obs["message"]


@pytest.mark.slow
def test_a_python_cell_that_ignores_the_interrupt_is_restarted(open_env: Callable[..., Any]) -> None:
    env = open_env()
    env.step({"type": "python", "code": "x = 41"})
    code = "import signal, time\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\nwhile True: time.sleep(0.1)"
    obs, took = step_cancelled_after(env, {"type": "python", "code": code, "timeout": 300})
    assert took < 60 and obs["exit_code"] == 1 and not obs["timed_out"]
    assert "did not stop when interrupted" in obs["message"] and "variables and imports are lost" in obs["message"]
    obs, *_ = env.step({"type": "python", "code": "print('x' in dir())"})
    assert obs["stdout"].strip() == "False"  # a fresh interpreter


def test_cancel_between_actions_is_a_no_op(open_env: Callable[..., Any]) -> None:
    env = open_env()
    assert env.unwrapped.cancel_action() is False  # nothing runs
    obs, *_ = env.step({"type": "shell", "code": "sleep 1; echo done"})
    assert obs["exit_code"] == 0 and obs["stdout"] == "done\n"


@pytest.mark.parametrize("delay", [0.0, 0.05])
def test_a_cancel_that_races_the_end_of_an_action_never_reaches_the_next(open_env: Callable[..., Any],
                                                                       delay: float) -> None:
    env = open_env()
    for _ in range(5):
        obs, _ = step_cancelled_after(env, {"type": "python", "code": "1"}, delay)
        assert obs["exit_code"] in (0, 1)  # either it ended first or it was interrupted
        obs, *_ = env.step({"type": "python", "code": "import time; time.sleep(0.3); 'ok'"})
        assert obs["stdout"].strip() == "'ok'" and obs["exit_code"] == 0, obs
