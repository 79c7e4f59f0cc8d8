"""AIDE with the LLM proposer against a real local LLM server: the journal and the trajectory hold real
completions with token counts, and the episode ends graded. (A 0.5B model may well write buggy code; the
machinery must not fail.)"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from llm_fixture import llm_base_url  # noqa: F401 - a pytest fixture

import mle_env
from mle_env.agents.program_template import BEGIN
from mle_env.recording import read_trajectory


@pytest.mark.slow
def test_aide_llm_proposer_records_real_completions(
    llm_base_url: str, practice_home: Path, tmp_path: Path  # noqa: F811
) -> None:
    journal = tmp_path / "journal.jsonl"
    policy = mle_env.make_policy(
        "aide", proposer="llm", program="auto", max_nodes=1, num_drafts=1, debug_prob=1.0, node_timeout=120,
        journal=str(journal), base_url=llm_base_url, max_tokens=400, temperature=0.2,
    )
    env = mle_env.make("practice-house-prices", sandbox="local", time_limit=1800)
    result = mle_env.run_episode(env, policy, seed=0)
    env.close()
    assert result.status == "ok" and result.grade is not None
    nodes = [json.loads(line) for line in journal.read_text().splitlines() if '"type": "node"' in line]
    assert len(nodes) == 1 and nodes[0]["operator"] == "draft"  # one real completion is what this checks
    for node in nodes:
        call = node["llm"][0]
        assert call["content"].strip() and call["prompt_tokens"] > 100 and call["completion_tokens"] > 0
        assert node["code"] or node["bug_reason"]
        assert not node["code"] or BEGIN in node["code"]  # "auto": house prices' programs are filled in
    calls = [call for r in read_trajectory(Path(result.trajectory)) if r["type"] == "step"
             for call in r.get("policy", {}).get("llm", [])]
    if any(n["code"] for n in nodes):  # a node without code runs nothing, so its completion waits for the next
        assert len(calls) >= 1 and all(c["completion_tokens"] > 0 and c["content"] for c in calls)
