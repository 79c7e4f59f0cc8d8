"""The LLM proposer: an LLM writes each solution's plan and program from the task, a data preview, a
size-capped memory of earlier nodes and (improve/debug) the parent's code and output."""

from __future__ import annotations

from typing import Any

from mle_env.scaffolds.aide import prompts
from mle_env.scaffolds.aide.journal import Node
from mle_env.scaffolds.aide.proposer import Proposal, SearchContext
from mle_env.text_interface import extract_code


class LLMProposer:
    """See the module docstring; every completion is kept on the proposal (and so in the journal)."""

    needs_profile = False

    def __init__(self, llm: Any = None, memory_chars: int = 4000, output_chars: int = 2000, **llm_options: Any) -> None:
        if llm is None:
            from mle_env.agents.llm import LLMClient

            llm = LLMClient(**llm_options)
        self.llm = llm
        self.memory_chars = memory_chars
        self.output_chars = output_chars

    def propose(self, operator: str, parent: Node | None, ctx: SearchContext) -> Proposal:
        context = prompts.header(ctx.task, ctx.data_preview, ctx.metric, ctx.lower_is_better, ctx.node_timeout)
        past = prompts.memory(ctx.journal, self.memory_chars)
        if operator == "draft":
            user = prompts.draft(context, past)
        elif operator == "improve":
            assert parent is not None
            user = prompts.improve(context, past, parent, self.output_chars)
        else:
            assert parent is not None
            user = prompts.debug(context, parent, self.output_chars)
        completion = self.llm.chat([{"role": "system", "content": prompts.SYSTEM}, {"role": "user", "content": user}])
        plan, code = extract_code(completion.content)
        return Proposal(plan=plan or f"{operator} (no plan given)", code=code, llm=[completion.record()])
