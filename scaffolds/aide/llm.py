"""The LLM proposer: an LLM writes each solution's plan and program from the task, a data preview, the
submission's exact format, the budget left, a memory of earlier nodes sized to the model's context window
and (improve/debug) the parent's code and output."""

from __future__ import annotations

from typing import Any

from mle_env.scaffolds.aide import prompts
from mle_env.scaffolds.aide.journal import Node
from mle_env.scaffolds.aide.proposer import Proposal, SearchContext
from mle_env.text_interface import extract_code

DEFAULT_CONTEXT_TOKENS = 8192  # when the server does not report its context window


class LLMProposer:
    """See the module docstring; every completion is kept on the proposal (and so in the journal).

    ``memory_chars`` caps the memory of earlier nodes; it is cut further to what the context window
    (asked of the server once; :data:`DEFAULT_CONTEXT_TOKENS` when it does not say) leaves after the
    rest of the prompt and the reply's ``max_tokens``.
    """

    needs_profile = False

    def __init__(self, llm: Any = None, memory_chars: int = 4000, output_chars: int = 2000, **llm_options: Any) -> None:
        if llm is None:
            from mle_env.agents.llm import LLMClient

            llm = LLMClient(**llm_options)
        self.llm = llm
        self.memory_chars = memory_chars
        self.output_chars = output_chars

    def context_tokens(self) -> int:
        probe = getattr(self.llm, "context_window", None)
        value = probe(DEFAULT_CONTEXT_TOKENS) if callable(probe) else None
        return int(value) if value else DEFAULT_CONTEXT_TOKENS

    def max_tokens(self) -> int:
        config = getattr(self.llm, "config", None)
        return int(getattr(config, "max_tokens", 1024) or 1024)

    def prompt(self, operator: str, parent: Node | None, ctx: SearchContext) -> str:
        """The user message for ``operator`` on ``parent`` (None for a draft)."""
        context = prompts.header(ctx.task, ctx.data_preview, ctx.metric, ctx.lower_is_better, ctx.node_timeout,
                                 ctx.submission, ctx.domain)
        left = "\n\n" + prompts.budget(ctx.time_left, ctx.nodes_left, ctx.node_timeout)
        if operator == "debug":
            assert parent is not None
            return prompts.debug(context, parent, self.output_chars) + left
        body = (prompts.draft(context, "") if operator == "draft"
                else prompts.improve(context, "", parent, self.output_chars))  # type: ignore[arg-type]
        room = prompts.memory_budget(self.context_tokens(), self.max_tokens(),
                                     len(prompts.SYSTEM) + len(body) + len(left), self.memory_chars)
        past = prompts.memory(ctx.journal, room)
        if operator == "draft":
            return prompts.draft(context, past) + left
        assert parent is not None
        return prompts.improve(context, past, parent, self.output_chars) + left

    def propose(self, operator: str, parent: Node | None, ctx: SearchContext) -> Proposal:
        user = self.prompt(operator, parent, ctx)
        completion = self.llm.chat([{"role": "system", "content": prompts.SYSTEM}, {"role": "user", "content": user}])
        plan, code = extract_code(completion.content)
        return Proposal(plan=plan or f"{operator} (no plan given)", code=code, llm=[completion.record()])
