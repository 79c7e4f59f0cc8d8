"""GRPO on mle-env competitions with TRL: the model works in a sandbox through four tools (shell, python,
validate, submit) and is rewarded with the medal its submission earns.

Needs a GPU, ``pip install 'mle-env[trl]'``, the model (from the Hugging Face Hub or a local folder) and the
competitions prepared (``mle-env prepare insults``)::

    python examples/trl_grpo.py --competitions insults --seeds 8 --max-steps 50
    python examples/trl_grpo.py --dry-run      # builds the config, dataset and factory, loads no model

Each prompt is one (competition, seed) row; each of its ``--num-generations`` rollouts is an episode of its
own. A rollout that stops calling tools without submitting is graded on the submission it left.
"""

from __future__ import annotations

import argparse
import os
from typing import Any

os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")  # environment_factory is marked experimental in TRL


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--model", default="Qwen/Qwen2.5-0.5B-Instruct", help="Hub id or local folder of a chat model "
                   "whose template TRL can parse tool calls from (Qwen2.5/3, Llama 3.1/3.2, ...)")
    p.add_argument("--competitions", nargs="+", default=["insults"], help="competition ids or aliases")
    p.add_argument("--seeds", type=int, default=8, help="prompts per competition (seeds 0..N-1)")
    p.add_argument("--sandbox", default="auto", choices=["auto", "docker", "local"])
    p.add_argument("--time-limit", type=float, default=900.0, help="seconds per episode")
    p.add_argument("--step-limit", type=int, default=30, help="actions per episode")
    p.add_argument("--num-generations", type=int, default=4, help="rollouts per prompt (GRPO's group size)")
    p.add_argument("--max-steps", type=int, default=50, help="optimizer steps")
    p.add_argument("--max-completion-length", type=int, default=8192,
                   help="tokens of a whole rollout: replies and tool results")
    p.add_argument("--max-tool-calls", type=int, default=30, help="tool-calling turns per rollout")
    p.add_argument("--learning-rate", type=float, default=1e-6)
    p.add_argument("--use-vllm", action="store_true", help="generate with vLLM (colocated); needs vllm installed")
    p.add_argument("--output-dir", default="grpo-mle-env")
    p.add_argument("--dry-run", action="store_true", help="build everything but the model and the trainer, then stop")
    return p.parse_args(argv)


def build(args: argparse.Namespace) -> tuple[Any, Any, Any]:
    """The GRPOConfig, the prompt dataset and the environment factory."""
    import torch
    from trl import GRPOConfig

    from mle_env.integrations.trl import environment_factory, make_dataset

    gpu = torch.cuda.is_available()  # without one this runs (slowly) on the CPU: for smoke tests with tiny models
    config = GRPOConfig(
        output_dir=args.output_dir,
        num_generations=args.num_generations,
        per_device_train_batch_size=args.num_generations,  # one prompt's group per device and step
        max_steps=args.max_steps,
        learning_rate=args.learning_rate,
        max_completion_length=args.max_completion_length,
        max_tool_calling_iterations=args.max_tool_calls,
        use_vllm=args.use_vllm,
        vllm_mode="colocate",
        bf16=gpu,
        use_cpu=not gpu,
        logging_steps=1,
        save_strategy="no",
        report_to=[],
    )
    dataset = make_dataset(args.competitions, seeds=range(args.seeds))
    factory = environment_factory(sandbox=args.sandbox, time_limit=args.time_limit, step_limit=args.step_limit)
    return config, dataset, factory


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    config, dataset, factory = build(args)
    print(f"{len(dataset)} prompts ({', '.join(sorted(set(dataset['competition'])))}) x {config.num_generations} "
          f"rollouts, {config.max_steps} steps, sandbox={args.sandbox}, model={args.model}")
    if args.dry_run:
        return
    from trl import GRPOTrainer

    from mle_env.integrations.trl import mle_reward

    trainer = GRPOTrainer(model=args.model, reward_funcs=mle_reward, args=config, train_dataset=dataset,
                          environment_factory=factory)
    trainer.train()
    trainer.save_model(args.output_dir)


if __name__ == "__main__":
    main()
