"""mle_env.export and ``mle-env export``: real trajectories (a react episode driven by the local LLM, a baseline
episode that medals) as chat-format training data that ``datasets`` loads and TRL's SFTTrainer prepares and
trains on; the medal and status filters; unusable files skipped; the output never half-written."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from conftest import require_import
from llm_fixture import llm_base_url  # noqa: F401 - fixture

import mle_env
from mle_env.cli import main
from mle_env.export import ExportError, export
from mle_env.text_interface import SYSTEM_PROMPT, TOOLS, parse_text_action, render_result, render_task
from mle_env.trajectory import MEDALS, load_episode

INSULTS = "detecting-insults-in-social-commentary"


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory, insults_session_home: Path,
            llm_base_url: str) -> Path:  # noqa: F811
    """A run directory with two real episodes: react with the local model (one LLM step, then its budget guard
    validates and submits) and the baseline (which medals)."""
    from mle_env.agents.react import ReactPolicy

    root = tmp_path_factory.mktemp("run")
    react = mle_env.make(INSULTS, sandbox="local", home=insults_session_home, record_dir=root / "react", step_limit=4)
    try:
        result = mle_env.run_episode(react, ReactPolicy(base_url=llm_base_url, api_key="none", max_tokens=128), seed=0)
    finally:
        react.close()
    assert result.status == "ok", result.error
    baseline = mle_env.make(INSULTS, sandbox="local", home=insults_session_home, record_dir=root / "baseline")
    try:
        result = mle_env.run_episode(baseline, mle_env.make_policy("baseline"), seed=0)
    finally:
        baseline.close()
    assert result.grade is not None and result.grade.any_medal, result.grade
    return root


def episodes(root: Path) -> dict[str, Any]:
    """agent -> its Episode, read straight from the files."""
    return {folder: load_episode(next((root / folder).rglob("trajectory.jsonl"))) for folder in ("react", "baseline")}


def by_agent(examples: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {e["metadata"]["agent"]: e for e in examples}


def llm_replies(step: dict[str, Any]) -> list[dict[str, Any]]:
    calls = step.get("policy", {}).get("llm")
    return [] if calls is None else calls if isinstance(calls, list) else [calls]


@pytest.mark.llm
@pytest.mark.slow
def test_openai_chat_lines_follow_the_episodes(run_dir: Path, insults_home: Path, tmp_path: Path) -> None:
    out = tmp_path / "chat.jsonl"
    result = export(run_dir, out=out)
    assert result.written == 2 and result.skipped == [] and result.examples == []
    examples = by_agent([json.loads(line) for line in out.read_text().splitlines()])
    recorded = episodes(run_dir)
    assert set(examples) == {"react", "baseline"}
    assert json.loads(examples["react"]["tools"]) == TOOLS
    for agent, example in examples.items():
        episode, messages = recorded[agent], example["messages"]
        assert messages[0] == {"role": "system", "content": SYSTEM_PROMPT}
        assert messages[1]["role"] == "user" and messages[1]["content"].startswith(episode.header["task"].rstrip())
        assert "data/train.csv" in messages[1]["content"].split("\n# Files\n", 1)[1]
        assert len(messages) == 2 + 2 * len(episode.steps)
        for step, call, answer in zip(episode.steps, messages[2::2], messages[3::2], strict=True):
            (tool_call,) = call["tool_calls"]
            assert call["role"] == "assistant" and tool_call["type"] == "function"
            assert {"type": tool_call["function"]["name"], **json.loads(tool_call["function"]["arguments"])} \
                == step["action"]
            assert answer == {"role": "tool", "tool_call_id": tool_call["id"],
                              "content": render_result({**step, "action": step["kind"]})}
            replies = llm_replies(step)
            assert call["content"] == (replies[-1]["content"] if replies else "")
        meta = example["metadata"]
        grade = episode.footer["grade"]
        assert meta | {"source": None} == meta | {
            "competition": INSULTS, "seed": 0, "status": "submitted", "steps": len(episode.steps),
            "medal": grade["medal"], "score": grade["score"], "valid": grade["valid_submission"], "source": None}
        assert meta["source"] == str(episode.path)
    react = examples["react"]["messages"]
    steps = recorded["react"].steps  # react runs the data preview itself, then the model chooses
    assert not llm_replies(steps[0]) and any(llm_replies(step) for step in steps[1:])
    assert [m["tool_calls"][0]["function"]["name"] for m in react[-4::2]] == ["validate", "submit"]
    assert examples["react"]["metadata"]["model"] and examples["baseline"]["metadata"]["model"] is None
    assert MEDALS.index(examples["baseline"]["metadata"]["medal"]) >= 1


@pytest.mark.llm
@pytest.mark.slow
def test_medal_and_status_filters(run_dir: Path, insults_home: Path) -> None:
    recorded = episodes(run_dir)
    for medal in MEDALS[1:]:
        kept = {e["metadata"]["agent"] for e in export(run_dir, min_medal=medal).examples}
        assert kept == {a for a, e in recorded.items() if MEDALS.index(e.medal) >= MEDALS.index(medal)}
    assert "baseline" in {e["metadata"]["agent"] for e in export(run_dir, min_medal="bronze").examples}
    assert export(run_dir, status="submitted").written == 2
    result = export(run_dir, status=["truncated", "sandbox_broken"])
    assert result.written == 0 and result.filtered == 2
    with pytest.raises(ExportError, match="min_medal must be one of bronze, silver, gold"):
        export(run_dir, min_medal="platinum")
    with pytest.raises(ExportError, match="status must be among"):
        export(run_dir, status="finished")
    with pytest.raises(ExportError, match="format must be one of"):
        export(run_dir, format="alpaca")


@pytest.mark.llm
@pytest.mark.slow
def test_sharegpt_turns_alternate_and_read_back_as_the_actions(run_dir: Path, insults_home: Path) -> None:
    recorded = episodes(run_dir)
    for example in export(run_dir, format="sharegpt").examples:
        turns, episode = example["conversations"], recorded[example["metadata"]["agent"]]
        assert turns[0] == {"from": "system", "value": SYSTEM_PROMPT}
        assert turns[1]["from"] == "human" and turns[1]["value"] == render_task(
            {"task": episode.header["task"], "files": turns[1]["value"].split("# Files\n", 1)[1]})
        # LLaMA-Factory's rule: human/observation, then gpt, in pairs after the system turn
        assert [t["from"] for t in turns[1:]] == ["human"] + ["gpt", "observation"] * (len(episode.steps) - 1) + ["gpt"]
        for step, gpt in zip(episode.steps, turns[2::2], strict=True):
            assert "<tool_call>\n" in gpt["value"] and gpt["value"].endswith("\n</tool_call>")
            block = gpt["value"].rsplit("<tool_call>\n", 1)[1]
            assert parse_text_action(block) == step["action"]


@pytest.mark.llm
@pytest.mark.slow
def test_datasets_loads_it_and_trl_trains_on_it(run_dir: Path, insults_home: Path, tmp_path: Path) -> None:
    datasets = require_import("datasets", "pip install 'mle-env[trl]'", "MLE_ENV_REQUIRE_RL")
    trl = require_import("trl", "pip install 'mle-env[trl]'", "MLE_ENV_REQUIRE_RL")
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast, Qwen2Config, Qwen2ForCausalLM
    from trl.data_utils import is_conversational, is_conversational_from_value

    chat, sharegpt = tmp_path / "chat.jsonl", tmp_path / "sharegpt.jsonl"
    export(run_dir, out=chat)
    export(run_dir, format="sharegpt", out=sharegpt)
    shared = datasets.load_dataset("json", data_files=str(sharegpt), split="train", cache_dir=str(tmp_path / "cache"))
    assert len(shared) == 2 and is_conversational_from_value(shared[0])
    data = datasets.load_dataset("json", data_files=str(chat), split="train", cache_dir=str(tmp_path / "cache"))
    assert len(data) == 2 and {"messages", "tools", "metadata"} <= set(data.column_names)
    assert is_conversational(data[0])

    # a tokenizer trained here and a tiny random model: nothing is downloaded
    specials = ["<unk>", "<|endoftext|>", "<|im_start|>", "<|im_end|>"]
    bpe = Tokenizer(models.BPE(unk_token="<unk>"))
    bpe.pre_tokenizer, bpe.decoder = pre_tokenizers.ByteLevel(add_prefix_space=False), decoders.ByteLevel()
    bpe.train_from_iterator([json.dumps(row["messages"]) for row in data], trainers.BpeTrainer(
        vocab_size=1500, special_tokens=specials, initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False))
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=bpe, unk_token="<unk>", eos_token="<|im_end|>",
                                        pad_token="<|endoftext|>")
    # Qwen3's training template: it writes string arguments as they are and marks assistant turns for the loss
    tokenizer.chat_template = (Path(trl.__file__).parent / "chat_templates" / "qwen3_training.jinja").read_text()
    text = tokenizer.apply_chat_template(data[0]["messages"], tools=json.loads(data[0]["tools"]), tokenize=False)
    assert '<tool_call>\n{"name": "submit", "arguments": {}}\n</tool_call>' in text and "<tool_response>" in text

    model = Qwen2ForCausalLM(Qwen2Config(vocab_size=len(tokenizer), hidden_size=32, intermediate_size=64,
                                         num_hidden_layers=1, num_attention_heads=2, num_key_value_heads=1,
                                         max_position_embeddings=4096))
    args = trl.SFTConfig(output_dir=str(tmp_path / "sft"), max_steps=1, per_device_train_batch_size=1,
                         assistant_only_loss=True, max_length=4096, report_to="none", use_cpu=True,
                         save_strategy="no", dataset_num_proc=None)
    trainer = trl.SFTTrainer(model=model, args=args, train_dataset=data, processing_class=tokenizer)
    assert len(trainer.train_dataset) == 2
    for row in trainer.train_dataset:
        labelled = tokenizer.decode([t for t in row["labels"] if t != -100])
        assert "<tool_call>" in labelled and "<tool_response>" not in labelled and SYSTEM_PROMPT[:40] not in labelled
    assert trainer.train().global_step == 1


@pytest.mark.llm
@pytest.mark.slow
def test_unusable_files_are_skipped_and_the_output_is_never_half_written(
        run_dir: Path, insults_home: Path, tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    source = next((run_dir / "baseline").rglob("trajectory.jsonl"))
    lines = source.read_text().splitlines(keepends=True)
    folder = tmp_path / "mixed"
    shutil.copytree(run_dir, folder)
    bad = {
        "torn/trajectory.jsonl": "".join(lines[:-1]) + lines[-1][:40],  # killed while writing the footer
        "garbled/trajectory.jsonl": "".join(lines[:2]) + "{not json\n" + "".join(lines[2:]),
        "gap/trajectory.jsonl": "".join(lines[:2] + lines[3:]),
        "empty/trajectory.jsonl": "",
    }
    for name, text in bad.items():
        (folder / name).parent.mkdir()
        (folder / name).write_text(text)
    (folder / "results.jsonl").write_text('{"status": "ok"}\n')  # not a trajectory: not even a warning
    no_steps = [lines[0], json.dumps({"type": "footer", "status": "closed", "grade": None, "steps": 0}) + "\n"]
    (folder / "abandoned.jsonl").write_text("".join(no_steps))

    out = tmp_path / "out.jsonl"
    out.write_text("previous export\n")
    result = export(folder, out=out)
    warnings = capsys.readouterr().err.strip().splitlines()
    assert result.written == 2 and result.filtered == 1 and len(result.skipped) == len(warnings) == 4
    reasons = {path.parent.name: reason for path, reason in result.skipped}
    assert "no footer after step" in reasons["torn"] and "line 3 is not JSON" in reasons["garbled"]
    assert "where step 2 was expected" in reasons["gap"] and "not a trajectory" in reasons["empty"]
    assert all(line.startswith("warning: skipped ") and str(folder) in line for line in warnings)
    assert len(out.read_text().splitlines()) == 2

    def fail(path: Path, reason: str) -> None:
        raise RuntimeError("stopped in the middle")

    out.write_text("previous export\n")
    with pytest.raises(RuntimeError):
        export(sorted(folder.rglob("*.jsonl")), out=out, warn=fail)
    assert out.read_text() == "previous export\n"
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".out.jsonl")] == []


@pytest.mark.llm
@pytest.mark.slow
def test_the_export_command(run_dir: Path, insults_home: Path, tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    out = tmp_path / "medals.jsonl"
    assert main(["export", str(run_dir), "--format", "sharegpt", "--min-medal", "bronze", "--out", str(out)]) == 0
    assert "exported 1 episodes" in capsys.readouterr().err
    (line,) = out.read_text().splitlines()
    assert json.loads(line)["metadata"]["agent"] == "baseline" and "conversations" in json.loads(line)

    assert main(["export", str(run_dir / "react"), "--status", "submitted"]) == 0  # to standard output
    printed = capsys.readouterr()
    (line,) = printed.out.splitlines()
    assert json.loads(line)["metadata"]["agent"] == "react" and "exported 1 episodes" in printed.err

    assert main(["export", str(tmp_path / "absent")]) == 2
    assert "no such file or folder" in capsys.readouterr().err
    (tmp_path / "nothing").mkdir()
    assert main(["export", str(tmp_path / "nothing")]) == 2
    assert "no trajectories under" in capsys.readouterr().err
