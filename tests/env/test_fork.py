"""MLEEnv.fork in both sandboxes: what a fork carries (files anywhere the agent writes, the budget spent, the
trajectory naming its parent), independence of parent and fork (files, closing, grading), replaying python
cells, forks of forks, forking after the end, and nothing left behind (containers and their copies, copied folders)."""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

import pandas as pd
import pytest
from gymnasium.error import ResetNeeded

import mle_env
from mle_env.env import MLEEnv
from mle_env.recording import read_trajectory


def _perfect(home: Path) -> str:
    answers = pd.read_csv(home / "tiny-comp" / "prepared" / "private" / "test.csv")
    rows = "\\n".join(f"{i},{float(t)}" for i, t in zip(answers["id"], answers["target"], strict=True))
    return f"printf 'id,target\\n{rows}\\n' > submission/submission.csv"


def _shell(env, code: str) -> str:
    obs, *_ = env.step(code)
    assert int(obs["exit_code"]) == 0, obs["stderr"] + obs["message"]
    return obs["stdout"]


def _leftover(backend: str, env) -> object:
    """What a fork leaves on the host while it runs: its container and the copy of its parent's files it was
    started from (docker), or its folder (local)."""
    sandbox = env.unwrapped._sandbox
    return (sandbox.container.id, sandbox.seed) if backend == "docker" else sandbox.base


def _gone(backend: str, leftover: object) -> bool:
    if backend == "local":
        return not Path(leftover).exists()
    import docker

    container, seed = leftover
    client = docker.from_env()
    try:
        client.containers.get(container)
    except docker.errors.NotFound:
        return seed.closed  # a temporary file: its space is freed when it is closed
    finally:
        client.close()
    return False


@pytest.fixture
def episode(backend: str, tiny_prepared: str, home: Path, monkeypatch: pytest.MonkeyPatch):
    """A reset env of the tiny competition; it and every fork made during the test are closed after it."""
    made: list[MLEEnv] = []
    original = MLEEnv.fork

    def fork(self: MLEEnv, replay_python: bool = False) -> MLEEnv:
        made.append(original(self, replay_python))
        return made[-1]

    monkeypatch.setattr(MLEEnv, "fork", fork)
    env = mle_env.make(tiny_prepared, sandbox=backend, memory="512m", time_limit=600, step_limit=40,
                       record_dir=home / "runs")
    env.reset(seed=3)
    yield env
    for forked in made:
        forked.close()
    env.close()


def test_fork_carries_files_budget_and_trajectory(episode, backend: str) -> None:
    _shell(episode, "echo code > code/a.py && echo tmp > /tmp/t.txt && mkdir -p ~/.cache && echo h > ~/.cache/x && "
                    "head -c 100000 /dev/urandom > logs/blob && ln -s ../code/a.py logs/link && "
                    "printf 'id,target\\n' > submission/submission.csv")
    episode.step({"type": "python", "code": "x = 41"})
    parent_sums = _shell(episode, "md5sum logs/blob; readlink logs/link")
    time.sleep(1)
    fork = episode.unwrapped.fork()
    assert type(fork) is MLEEnv and fork is not episode.unwrapped
    obs = fork.fork_info["observation"]
    assert obs["action"] == "fork" and "python interpreter is a fresh one" in obs["message"]
    assert int(obs["steps_left"]) == 40 - 3 and float(obs["time_left"]) < 600 - 1
    obs, *_ = fork.step("cat code/a.py /tmp/t.txt ~/.cache/x submission/submission.csv; md5sum logs/blob; "
                        "readlink logs/link; stat -c %U code/a.py")
    assert obs["stdout"].split("\n")[:4] == ["code", "tmp", "h", "id,target"]
    assert parent_sums in obs["stdout"] and obs["stdout"].strip().endswith("agent")
    assert "python interpreter is a fresh one" in obs["message"]  # said again in the first step
    assert int(obs["steps_left"]) == 40 - 4
    obs, *_ = fork.step({"type": "python", "code": "print('x' in globals())"})
    assert obs["stdout"].strip() == "False"
    obs, *_ = fork.step({"type": "validate"})  # the fork's own validation endpoint and data
    assert "invalid submission" in obs["message"]
    records = read_trajectory(Path(fork.fork_info["trajectory"]))
    parent_header = read_trajectory(Path(episode.unwrapped._writer.path))[0]
    header = records[0]
    assert header["fork"]["parent_episode"] == parent_header["episode_id"] != header["episode_id"]
    assert header["fork"]["step"] == 3 and header["seed"] == 3 and header["limits"] == parent_header["limits"]
    assert [r["step"] for r in records[1:]] == [1, 2, 3, 4, 5, 6]
    assert Path(fork.fork_info["episode_dir"]) != Path(episode.unwrapped._episode_dir)
    fork.close()


def test_parent_and_fork_are_independent_and_graded_apart(episode, backend: str, home: Path) -> None:
    _shell(episode, "echo shared > code/common.txt")
    fork = episode.unwrapped.fork()
    leftover = _leftover(backend, fork)
    try:
        _shell(fork, "echo fork > code/only_fork.txt && echo changed > code/common.txt")
        _shell(episode, "echo parent > code/only_parent.txt")
        assert _shell(episode, "ls code; cat code/common.txt").split() == ["common.txt", "only_parent.txt", "shared"]
        assert _shell(fork, "ls code; cat code/common.txt").split() == ["common.txt", "only_fork.txt", "changed"]
        # the parent submits a perfect answer, the fork a constant one: two grades
        _shell(episode, _perfect(home))
        _shell(fork, "python3 -c \"import pandas as pd; s = pd.read_csv('data/sample_submission.csv'); "
                     "s['target'] = 0.5; s.to_csv('submission/submission.csv', index=False)\"")
        *_, parent_info = episode.step({"type": "submit"})
        episode.close()  # closing the parent leaves the fork working
        assert _shell(fork, "cat code/only_fork.txt").strip() == "fork"
        _, fork_reward, terminated, _, fork_info = fork.step({"type": "submit"})
        assert terminated and parent_info["grade"]["score"] == 1.0 and fork_info["grade"]["score"] == 0.5
        assert parent_info["grade"]["medal"] == "gold" and fork_reward == 0.0
        assert parent_info["episode_dir"] != fork_info["episode_dir"]
        footer = read_trajectory(Path(fork_info["trajectory"]))[-1]
        assert footer["type"] == "footer" and footer["grade"]["score"] == 0.5
    finally:
        fork.close()
    assert _gone(backend, leftover)


def test_replay_python_reports_failed_cells(episode) -> None:
    episode.step({"type": "python", "code": "import json\nstate = {'n': 1}"})
    episode.step({"type": "python", "code": "raise ValueError('boom')"})
    episode.step({"type": "python", "code": "state['n'] += 1\nopen('code/n.txt', 'w').write(str(state['n']))"})
    fork = episode.unwrapped.fork(replay_python=True)
    try:
        message = fork.fork_info["observation"]["message"]
        assert "re-run in order, 1 failed: step 2 (exit code 1: ValueError: boom)" in message
        obs, *_ = fork.step({"type": "python", "code": "print(state['n'], json.dumps([1]))"})
        assert obs["stdout"].strip() == "2 [1]"
        header = read_trajectory(Path(fork.fork_info["trajectory"]))[0]
        assert header["fork"]["replay_failures"] == [{"step": 2, "error": "exit code 1: ValueError: boom"}]
    finally:
        fork.close()


def test_fork_of_a_fork_outlives_its_parents(episode, backend: str) -> None:
    _shell(episode, "echo 1 > code/level")
    first = episode.unwrapped.fork()
    _shell(first, "echo 2 >> code/level")
    second = first.fork()
    leftovers = [_leftover(backend, first), _leftover(backend, second)]
    header = read_trajectory(Path(second.fork_info["trajectory"]))[0]
    assert header["fork"]["parent_episode"] == read_trajectory(Path(first.fork_info["trajectory"]))[0]["episode_id"]
    first.close()
    episode.close()
    assert _shell(second, "echo 3 >> code/level && cat code/level").split() == ["1", "2", "3"]
    second.close()
    assert all(_gone(backend, leftover) for leftover in leftovers)


def test_forking_an_ended_episode_raises(episode) -> None:
    episode.step({"type": "submit"})
    with pytest.raises(ResetNeeded, match="only a running episode can be forked"):
        episode.unwrapped.fork()
    episode.reset()
    episode.unwrapped.fork().close()  # a new episode can be forked again


def test_no_snapshot_or_copy_left_behind(episode, backend: str) -> None:
    forks = [episode.unwrapped.fork() for _ in range(2)]
    leftovers = [_leftover(backend, f) for f in forks]
    if backend == "local":
        assert all(Path(p).parent == Path(tempfile.gettempdir()) for p in leftovers)
    else:
        assert all(not seed.closed for _, seed in leftovers)
    for fork in forks:
        fork.close()
        fork.close()  # idempotent
    assert all(_gone(backend, leftover) for leftover in leftovers)


class _MarkingProposer:
    """Programs that append their node id to /tmp/marks and print the marks they find (their lineage)."""

    needs_profile = False
    scores = {0: 0.9, 1: 0.5, 2: 0.1, 3: 0.95}

    def propose(self, operator: str, parent, ctx):
        from mle_env.scaffolds.aide.proposer import Proposal

        node = ctx.journal.next_id()
        code = (f"import pandas as pd\nopen('/tmp/marks', 'a').write('{node}\\n')\n"
                "print('MARKS', open('/tmp/marks').read().split())\n"
                "s = pd.read_csv('data/sample_submission.csv'); s.to_csv('submission/submission.csv', index=False)\n"
                f"print('VALIDATION_SCORE: {self.scores[node]}')\n")
        return Proposal(plan=f"{operator} {node}", code=code)


@pytest.mark.slow
def test_aide_fork_branches_children_from_their_parents_state(backend: str, tiny_prepared: str, home: Path) -> None:
    from mle_env.scaffolds.aide.policy import AidePolicy

    policy = AidePolicy(custom_proposer=_MarkingProposer(), fork=True, num_drafts=2, max_nodes=4, debug_prob=0.0,
                        journal=str(home / "journal.jsonl"))
    env = mle_env.make(tiny_prepared, sandbox=backend, memory="512m", time_limit=600, record_dir=home / "runs")
    try:
        result = mle_env.run_episode(env, policy, seed=0)
    finally:
        env.close()
    marks = {n.id: n.output_head.split("MARKS ")[1].split("\n")[0] for n in policy.journal.nodes}
    # drafts share the episode; each improve child of node 0 starts from the episode as node 0 left it, so
    # it finds node 0's mark and not node 1's, nor its sibling's (node 2's)
    assert marks == {0: "['0']", 1: "['0', '1']", 2: "['0', '2']", 3: "['0', '3']"}
    assert [n.operator for n in policy.journal.nodes] == ["draft", "draft", "improve", "improve"]
    assert policy.journal.best(False).id == 3 and policy._states == {}
    assert result.status == "ok" and result.grade.valid_submission
    steps = [r for r in read_trajectory(Path(result.trajectory)) if r["type"] == "step"]
    assert "node_3" in steps[-3]["action"]["code"]  # the best node, found in a branch, re-run in the episode
    forks = [read_trajectory(p)[0] for p in (home / "runs").glob("*/trajectory.jsonl")]
    assert sum(1 for h in forks if h.get("fork")) == 4  # the states of nodes 0, 1, 2 and 3 (2 and 3 are branches)
