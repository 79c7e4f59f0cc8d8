"""The TRL adapter, driven through TRL's own environment code in GRPOTrainer (no training step).

A real GRPOTrainer is built with a tiny randomly initialised Qwen2 model and a byte-level tokenizer that
carries TRL's own Qwen2.5 chat template (so nothing is downloaded). The trainer then does everything it does
for a rollout: it probes the factory and turns the class's public methods into tools, resets one pooled
instance per rollout with the dataset row, renders each prompt with the tools' schemas (transformers'
get_json_schema via the chat template), parses the replies' <tool_call> blocks with TRL's parse_response,
executes the calls in its tool loop and calls the reward function with ``environments=``. Only the policy's
token generation (``_generate_single_turn``) is the model-free script of tests/integrations/insults_script.py:
the seam where a model's tokens would enter.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from insults_script import COMPETITION, TOOL_CALLS

try:
    import trl  # noqa: F401
except ImportError as e:
    if os.environ.get("MLE_ENV_REQUIRE_RL") == "1":
        raise
    pytest.skip(f"cannot import trl ({e}); pip install 'mle-env[trl]'", allow_module_level=True)
os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")

from mle_env.errors import ConfigError, UnknownCompetition  # noqa: E402
from mle_env.integrations.trl import MLEToolEnv, environment_factory, make_dataset, mle_reward  # noqa: E402

TOOLS = {"shell", "python", "validate", "submit"}
MARK = "rollout-b"  # content of the second rollout's replies, so the script can tell the rollouts apart
# the second rollout: a bad argument type, an argument the tool does not take, submit with nothing written,
# then a call after the end
ROLLOUT_B = [("python", {"code": 42}), ("shell", {"cmd": "ls"}), ("submit", {}), ("shell", {"code": "ls"})]


def _tokenizer() -> Any:
    """A byte-level tokenizer (any text round-trips) with TRL's shipped Qwen2.5 chat template."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast
    from trl.chat_template_utils import qwen2_5_chat_template

    alphabet = sorted(pre_tokenizers.ByteLevel.alphabet())
    core = Tokenizer(models.BPE(vocab={c: i for i, c in enumerate(alphabet)}, merges=[]))
    core.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)
    core.decoder = decoders.ByteLevel()
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=core, eos_token="<|im_end|>", pad_token="<|endoftext|>",
                                        extra_special_tokens=["<|im_start|>"])
    tokenizer.chat_template = qwen2_5_chat_template
    return tokenizer


def _trainer(tmp_path: Path, factory: Any, dataset: Any) -> Any:
    import torch
    from transformers import Qwen2Config, Qwen2ForCausalLM
    from trl import GRPOConfig, GRPOTrainer

    tokenizer = _tokenizer()
    torch.manual_seed(0)
    model = Qwen2ForCausalLM(Qwen2Config(
        vocab_size=len(tokenizer), hidden_size=16, intermediate_size=32, num_hidden_layers=1, num_attention_heads=2,
        num_key_value_heads=1, max_position_embeddings=1 << 16, pad_token_id=tokenizer.pad_token_id,
        eos_token_id=tokenizer.eos_token_id, bos_token_id=None))
    args = GRPOConfig(output_dir=str(tmp_path / "grpo"), per_device_train_batch_size=2, num_generations=2,
                      max_completion_length=32_768, report_to=[], use_cpu=True, save_strategy="no")
    return GRPOTrainer(model=model, reward_funcs=mle_reward, args=args, train_dataset=dataset,
                       processing_class=tokenizer, environment_factory=factory)


def _reply(name: str, arguments: dict[str, Any], content: str = "") -> str:
    """A reply in the Qwen2.5 tool-call format that TRL's response parser reads."""
    call = json.dumps({"name": name, "arguments": arguments})
    return f"{content}\n<tool_call>\n{call}\n</tool_call><|im_end|>" if content else \
        f"<tool_call>\n{call}\n</tool_call><|im_end|>"


class ScriptedPolicy:
    """Stands in for ``GRPOTrainer._generate_single_turn``: answers each prompt with its rollout's next reply.

    The first batch holds identical prompts, told apart by position; later, a rollout's own history tells.
    """

    def __init__(self, tokenizer: Any) -> None:
        self.tokenizer = tokenizer
        self.scripts = {"a": [_reply(n, a) for n, a in TOOL_CALLS] + ["Submitted.<|im_end|>"],
                        "b": [_reply(n, a, MARK) for n, a in ROLLOUT_B] + [f"{MARK} done<|im_end|>"]}
        self.prompts: list[str] = []

    def __call__(self, prompt_ids: list[list[int]], images: Any, multimodal_fields: Any, num_generations: int,
                 has_tool_images: bool = False) -> tuple[list[list[int]], None]:
        out = []
        for index, ids in enumerate(prompt_ids):
            text = self.tokenizer.decode(ids)
            self.prompts.append(text)
            turn = text.count("<|im_start|>assistant") - 1
            rollout = ("b" if index % 2 else "a") if turn == 0 else ("b" if MARK in text else "a")
            reply = self.scripts[rollout][min(turn, len(self.scripts[rollout]) - 1)]
            out.append(self.tokenizer(reply, add_special_tokens=False)["input_ids"])
        return out, None


@pytest.mark.slow
def test_grpo_trainer_runs_the_script_to_a_medal(insults_home: Path, bwrap_ready: None, tmp_path: Path) -> None:
    dataset = make_dataset([COMPETITION], seeds=[7, 8])
    trainer = _trainer(tmp_path, environment_factory(COMPETITION, sandbox="local", time_limit=900), dataset)
    assert {tool.__name__ for tool in trainer._env_tools[None]} == TOOLS  # no reward/grade/_close among them
    policy = ScriptedPolicy(trainer.processing_class)
    trainer._generate_single_turn = policy
    trainer.model.train()

    trainer._generate_and_score_completions([dataset[0], dataset[0]])

    first_prompt = policy.prompts[0]
    assert '"name": "shell"' in first_prompt and "the bash command or script to run" in first_prompt  # schemas
    assert "then submit.\n\n" in first_prompt and "detecting" in first_prompt.lower()  # reset's task text
    a, b = trainer.environments
    assert isinstance(a, MLEToolEnv) and a is trainer._environment_pool[None][0]
    assert a.status == "submitted" and a.grade["valid_submission"] and a.grade["medal_tier"] >= 1, a.grade
    assert a.reward == a.grade["medal_tier"]
    assert a.env.unwrapped._seed == 7
    assert b.status == "submitted" and b.reward == 0.0 and not b.grade["submission_exists"]
    assert trainer._metrics["train"]["rewards/mle_reward/mean"] == [pytest.approx((a.reward + b.reward) / 2)]
    assert trainer._metrics["train"]["tools/failure_frequency"] == [pytest.approx(1 / 8)]  # only {"cmd": ...}
    assert mle_reward([None, None], environments=[a, b]) == [a.reward, 0.0]  # ended episodes stay graded
    assert a.env.unwrapped._sandbox is None and b.env.unwrapped._sandbox is None  # removed at the end

    # what rollout b was told: the bad type as an observation, the unknown argument as TRL's error, the end
    b_text = next(p for p in reversed(policy.prompts) if MARK in p and p.count("<tool_response>") == 4)
    responses = b_text.split("<tool_response>")[1:]
    assert "invalid: exit code 1" in responses[0] and "malformed action" in responses[0]
    assert "error" in responses[1] and "cmd" in responses[1]
    assert "the episode has ended (submitted)" in responses[2]
    assert responses[3].strip().startswith("the episode has ended (submitted); no more actions run")

    # the next batch resets the same pooled instances with its own row: fresh episodes, graded afresh
    first_episode = a.info["episode_dir"]
    trainer._generate_and_score_completions([dataset[1], dataset[1]])
    assert trainer.environments == [a, b] and a.env.unwrapped._seed == 8
    assert a.info["episode_dir"] != first_episode and a.grade["medal_tier"] >= 1 and b.reward == 0.0


def test_reset_starts_afresh_and_the_reward_grades_an_open_episode(insults_home: Path, bwrap_ready: None) -> None:
    with environment_factory(COMPETITION, sandbox="local", time_limit=300)() as env:
        assert env.shell("ls") == "no episode is running: reset() must be called before the tools"
        task = env.reset(prompt=[{"role": "user", "content": "Go."}], seed=1)
        assert task.startswith("\n\n") and "# Files" in task and env.status == "running" and env.reward is None
        assert "exit code 0" in env.shell("touch code/mark && echo 'id,Insult' > submission/submission.csv")
        assert "malformed action" in env.python("print(1)", timeout=-5)  # a bad argument is an observation
        first_env = env.env
        env.reset(seed=2)
        assert env.env is first_env and env.status == "running" and env.info["seed"] == 2
        assert "No such file" in env.shell("ls code/mark submission/submission.csv")  # a fresh sandbox
        assert env.reward is None and env.grade is None
        env.shell("cp data/sample_submission_null.csv submission/submission.csv")  # valid, scores no medal
        assert mle_reward(["done"], environments=[env]) == [0.0]  # ended by grading what is there
        assert env.status == "submitted" and env.grade["valid_submission"] and env.grade["score"] is not None
        assert env.validate() == "the episode has ended (submitted); no more actions run"
        assert env.reward == 0.0 and env.env.unwrapped._sandbox is None
    assert env.env is None  # closed by the with block


def test_bad_configuration_fails_before_any_sandbox(home: Path) -> None:
    with pytest.raises(ConfigError, match="memory"):
        environment_factory("insults", memory="lots")
    with pytest.raises(ConfigError, match="did you mean 'time_limit'"):
        environment_factory("insults", time_limt=5)
    with pytest.raises(UnknownCompetition):
        environment_factory("no-such-competition")
    with pytest.raises(ConfigError, match="no competition"):
        MLEToolEnv().reset(prompt="x")
    with pytest.raises(ConfigError, match="seed"):
        MLEToolEnv("insults").reset(seed="one")
    with pytest.raises(ValueError, match="environment_factory"):
        mle_reward(["a"])


def test_make_dataset_rows() -> None:
    rows = make_dataset(["insults"], seeds=range(2)).to_list()
    assert [(r["competition"], r["seed"]) for r in rows] == [(COMPETITION, 0), (COMPETITION, 1)]
    assert [m["role"] for m in rows[0]["prompt"]] == ["system", "user"]
    assert "shell" in rows[0]["prompt"][0]["content"] and "cannot call tools" not in rows[0]["prompt"][0]["content"]


def test_make_dataset_takes_a_set_of_practice_competitions() -> None:
    from mle_env.competition.registry import task_set

    held_out = task_set("practice-eval")
    rows = make_dataset("practice-eval", seeds=[0, 1]).to_list()
    assert [(r["competition"], r["seed"]) for r in rows] == [(c, s) for c in held_out for s in (0, 1)]
    assert len(make_dataset(["practice-train", "practice-eval"]).to_list()) == len(task_set("practice"))
