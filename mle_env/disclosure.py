"""What every result discloses, so that results can be compared and reviewed: the columns openai/mle-bench#138
proposes, filled in by the env for every episode (no form to fill by hand).

The env counts, while the episode runs, what the agent learnt about its submissions and what its policy spent
on LLMs (:class:`Feedback`), and at the end writes :func:`episode_disclosure` into the trajectory's footer,
``grade.json`` and the last step's ``info["disclosure"]``; evaluations copy it into ``results.jsonl`` and
``mle-env report`` sums it up (:func:`summarize_disclosures`).

Fields: ``mle_env_version``; ``competition`` (id, version); ``hardware`` (the host's CPU model and cores, the
sandbox's CPU and memory limits, its GPUs and their model); ``sandbox``, ``image``, ``network``; ``time_limit_s``,
``wall_time_s``, ``steps``, ``step_limit``; ``test_set_feedback`` (always ``"none"``: mle-env shows no test
score; ``validate`` says only "valid" or what is wrong), ``validate_calls`` (actions and in-sandbox endpoint
requests), ``score_dev_calls`` and ``dev_split`` (scores on held-out *training* rows); ``task_text``;
``test_scores_logged`` (hidden test-score logging was on: see mle_env.test_score_log); ``llm``
(calls, prompt and completion tokens, cost in USD where the client knows the price; None when the policy
recorded no LLM call).
"""

from __future__ import annotations

import functools
import os
import subprocess
from dataclasses import dataclass, field
from typing import Any

from mle_env.version import __version__

TEST_SET_FEEDBACK = "none"


@dataclass
class Feedback:
    """What one episode's agent asked of the host and spent on LLMs, counted by the env as it runs."""

    validate_actions: int = 0
    #: in-sandbox endpoint requests answered before the current sandbox (a fork's parent's)
    endpoint_before: int = 0
    score_dev: int = 0
    llm: dict[str, Any] = field(default_factory=lambda: {"calls": 0, "prompt_tokens": 0, "completion_tokens": 0,
                                                         "cost": None})

    def count_action(self, kind: str) -> None:
        if kind == "validate":
            self.validate_actions += 1
        elif kind == "score_dev":
            self.score_dev += 1

    def count_llm(self, annotations: dict[str, Any]) -> None:
        """Add the LLM calls a policy recorded for a step (``annotate(llm=record or [records])``, each record
        with ``prompt_tokens``, ``completion_tokens`` and ``cost``, as mle_env.agents.llm writes them)."""
        records = annotations.get("llm")
        for record in records if isinstance(records, list) else [records] if records is not None else []:
            if not isinstance(record, dict):
                continue
            self.llm["calls"] += 1
            for key in ("prompt_tokens", "completion_tokens"):
                value = record.get(key)
                self.llm[key] += int(value) if isinstance(value, (int, float)) and value >= 0 else 0
            cost = record.get("cost")
            if isinstance(cost, (int, float)):
                self.llm["cost"] = (self.llm["cost"] or 0.0) + float(cost)

    def copy(self, endpoint_answered: int = 0) -> Feedback:
        """A fork's counts: this episode's so far, the endpoint's requests included."""
        return Feedback(self.validate_actions, self.endpoint_before + endpoint_answered, self.score_dev,
                        dict(self.llm))


@functools.cache
def gpu_model() -> str | None:
    """The host's GPU model from nvidia-smi, or None where there is none."""
    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"], capture_output=True,
                             text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    names = [line.strip() for line in out.stdout.splitlines() if line.strip()]
    return ", ".join(sorted(set(names))) or None


@functools.cache
def cpu_model() -> str | None:
    """The host CPU's model name (Linux's /proc/cpuinfo; None where it cannot be read)."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as f:
            for line in f:
                if line.lower().startswith(("model name", "hardware", "cpu model")):
                    return line.split(":", 1)[1].strip() or None
    except OSError:
        return None
    return None


def episode_disclosure(*, competition_id: str, competition_version: int, sandbox: str, image: str | None,
                       sandbox_info: dict[str, Any], network: bool, time_limit_s: float, wall_time_s: float,
                       steps: int, step_limit: int | None, feedback: Feedback, endpoint_answered: int,
                       dev_split: float | None, task_text: str, test_scores_logged: bool = False) -> dict[str, Any]:
    """The disclosure of one episode (see the module docstring); JSON-ready."""
    gpus = list(sandbox_info.get("gpus") or [])
    return {
        "mle_env_version": __version__,
        "competition": {"id": competition_id, "version": competition_version},
        "hardware": {"cpu_model": cpu_model(), "host_cpus": os.cpu_count(), "cpus": sandbox_info.get("cpus"),
                     "memory_bytes": sandbox_info.get("memory_bytes"), "gpus": gpus, "gpu_count": len(gpus),
                     "gpu_model": gpu_model() if gpus else None},
        "sandbox": sandbox, "image": image, "network": bool(network),
        "time_limit_s": time_limit_s, "wall_time_s": round(wall_time_s, 3), "steps": steps, "step_limit": step_limit,
        "test_set_feedback": TEST_SET_FEEDBACK,
        "validate_calls": feedback.validate_actions + feedback.endpoint_before + endpoint_answered,
        "score_dev_calls": feedback.score_dev, "dev_split": dev_split, "task_text": task_text,
        "test_scores_logged": bool(test_scores_logged),
        "llm": dict(feedback.llm) if feedback.llm["calls"] else None,
    }


def summarize_disclosures(disclosures: list[dict[str, Any]]) -> dict[str, Any]:
    """One evaluation's disclosure (``mle-env report``): what varied is listed, what is summed is summed.
    Episodes without a disclosure (an infrastructure error before the end) are left out and counted."""
    found = [d for d in disclosures if isinstance(d, dict)]

    def values(get: Any) -> list[Any]:
        return sorted({str(v) for v in (get(d) for d in found) if v is not None})

    llm = [d["llm"] for d in found if isinstance(d.get("llm"), dict)]
    costs = [x["cost"] for x in llm if isinstance(x.get("cost"), (int, float))]
    walls = [float(d["wall_time_s"]) for d in found if isinstance(d.get("wall_time_s"), (int, float))]
    return {
        "episodes": len(found), "episodes_without": len(disclosures) - len(found),
        "mle_env_version": values(lambda d: d.get("mle_env_version")),
        "cpu_model": values(lambda d: (d.get("hardware") or {}).get("cpu_model")),
        "cpus": values(lambda d: (d.get("hardware") or {}).get("cpus")),
        "memory_bytes": values(lambda d: (d.get("hardware") or {}).get("memory_bytes")),
        "gpus": values(lambda d: ", ".join((d.get("hardware") or {}).get("gpus") or []) or "none"),
        "sandbox": values(lambda d: d.get("sandbox")), "image": values(lambda d: d.get("image")),
        "network": values(lambda d: d.get("network")), "time_limit_s": values(lambda d: d.get("time_limit_s")),
        "wall_time_s": {"mean": sum(walls) / len(walls), "max": max(walls)} if walls else None,
        "steps_mean": (sum(int(d.get("steps") or 0) for d in found) / len(found)) if found else None,
        "test_set_feedback": values(lambda d: d.get("test_set_feedback")),
        "validate_calls": sum(int(d.get("validate_calls") or 0) for d in found),
        "score_dev_calls": sum(int(d.get("score_dev_calls") or 0) for d in found),
        "dev_split": values(lambda d: d.get("dev_split")), "task_text": values(lambda d: d.get("task_text")),
        "test_scores_logged": values(lambda d: d.get("test_scores_logged")),
        "llm": {"calls": sum(int(x.get("calls") or 0) for x in llm),
                "prompt_tokens": sum(int(x.get("prompt_tokens") or 0) for x in llm),
                "completion_tokens": sum(int(x.get("completion_tokens") or 0) for x in llm),
                "cost": sum(costs) if costs else None} if llm else None,
        "competition_versions": values(lambda d: "{id}@{version}".format(**d["competition"])
                                       if isinstance(d.get("competition"), dict) else None),
    }
