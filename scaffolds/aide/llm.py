"""The LLM proposer: an LLM writes each solution's plan and program from the task, a data preview, the
submission's exact format, the budget left, a memory of earlier nodes sized to the model's context window
and (improve/debug) the parent's code and output.

``program`` says what the model writes: "whole" programs, or ("fill") only the features and the estimator
of a program whose other lines the harness writes (:mod:`mle_env.agents.program_template`: the split, the
competition's metric, the submission file); "auto" (the default) fills in wherever the competition has a
template (one target column, a metric the harness can score) and asks for whole programs elsewhere.

A reply with no code, or (fill-in) whose part leaves a name undefined, gets one more turn that asks for the
code block alone and names what is missing. In fill-in mode the model is stopped at the outline's
end-of-part line (a reply that copies the outline and fills it in place has written its part by then)."""

from __future__ import annotations

from typing import Any

from mle_env.agents.program_template import OUTLINE_END, PROGRAMS, ProgramTemplate, part_of, program_template
from mle_env.agents.repairs import parse_repairs
from mle_env.agents.repairs import record as record_repairs
from mle_env.scaffolds.aide import prompts
from mle_env.scaffolds.aide.journal import Node
from mle_env.scaffolds.aide.proposer import Proposal, SearchContext
from mle_env.text_interface import cut_in_code, extract_code

DEFAULT_CONTEXT_TOKENS = 8192  # when the server does not report its context window


class LLMProposer:
    """See the module docstring; every completion is kept on the proposal (and so in the journal).

    ``memory_chars`` caps the memory of earlier nodes; it is cut further to what the context window
    (asked of the server once; :data:`DEFAULT_CONTEXT_TOKENS` when it does not say) leaves after the
    rest of the prompt and the reply's ``max_tokens``. ``program``: "auto", "whole" or "fill" (see the
    module docstring).
    """

    needs_profile = False

    def __init__(self, llm: Any = None, memory_chars: int = 4000, output_chars: int = 2000, program: str = "whole",
                 repairs: str = "all", **llm_options: Any) -> None:
        from mle_env.agents import AgentError

        if program not in PROGRAMS:
            raise AgentError(f"program must be one of {', '.join(PROGRAMS)}, not {program!r}")
        try:
            self.repairs = parse_repairs(repairs)
        except ValueError as e:
            raise AgentError(f"aide: {e}") from None
        if llm is None:
            from mle_env.agents.llm import LLMClient

            llm = LLMClient(**llm_options)
        self.llm = llm
        self.memory_chars = memory_chars
        self.output_chars = output_chars
        self.program = program

    def template(self, ctx: SearchContext) -> ProgramTemplate | None:
        """The fill-in template for this competition, or None when the model writes whole programs."""
        if self.program == "whole":
            return None
        template = program_template(ctx.submission, ctx.metric, ctx.domain, ctx.data_preview, self.repairs)
        if template is None and self.program == "fill":
            from mle_env.agents import AgentError

            raise AgentError(f"program='fill' needs a competition with one target column and a metric the harness "
                             f"can score (not {ctx.metric!r}): use program='auto' or 'whole'")
        return template

    def context_tokens(self) -> int:
        probe = getattr(self.llm, "context_window", None)
        value = probe(DEFAULT_CONTEXT_TOKENS) if callable(probe) else None
        return int(value) if value else DEFAULT_CONTEXT_TOKENS

    def max_tokens(self) -> int:
        config = getattr(self.llm, "config", None)
        return int(getattr(config, "max_tokens", 1024) or 1024)

    def prompt(self, operator: str, parent: Node | None, ctx: SearchContext) -> str:
        """The user message for ``operator`` on ``parent`` (None for a draft)."""
        return self._prompt(operator, parent, ctx, self.template(ctx))

    def system(self, ctx: SearchContext) -> str:
        """The system message: for whole programs, or for the fill-in part."""
        return _system(self.template(ctx))

    def propose(self, operator: str, parent: Node | None, ctx: SearchContext) -> Proposal:
        template = self.template(ctx)
        user = self._prompt(operator, parent, ctx, template)
        messages = [{"role": "system", "content": _system(template)}, {"role": "user", "content": user}]
        # a reply that copies the outline in place has written its part by its end-of-part line
        options = {"stop": [OUTLINE_END]} if template is not None else {}
        completion = self.llm.chat(messages, **options)
        completions = [completion]
        base = part_of(parent.code) if parent is not None and template is not None else ""  # the part it changes
        plan, code, lacking, repairs = self._program(template, completion, base)
        if lacking:  # small models sometimes answer with the prompt's words, a plan alone or half a part: once more
            messages = [*messages, {"role": "assistant", "content": completion.content},
                        {"role": "user", "content": prompts.code_please(template, lacking)}]
            second = self.llm.chat(messages, **options)
            completions.append(second)
            second_plan, second_code, _, second_repairs = self._program(template, second, base)
            if second_code.strip():
                plan, code, repairs = second_plan, second_code, second_repairs  # the first reply's text is no plan
        return Proposal(plan=plan or f"{operator} (no plan given)", code=code, llm=[c.record() for c in completions],
                        repairs=repairs)

    @staticmethod
    def _program(template: ProgramTemplate | None, completion: Any, base: str
                 ) -> tuple[str, str, tuple[str, ...], dict[str, Any] | None]:
        """The reply's plan, its program (in fill-in mode its part inside the fixed lines, see
        :meth:`ProgramTemplate.filled`; "" when it has no code), what it lacks (("code",) when it has no
        code; in fill-in mode, the names its part does not define; () when it is complete) and what the
        repairs changed (:func:`mle_env.agents.repairs.record`; None when none fired)."""
        plan, code = extract_code(completion.content)
        if not code.strip():
            return plan, "", ("code",), None
        if template is None:
            return plan, code, (), None
        program, lacking, fired, ran = template.filled(code, cut_in_code(completion.content,
                                                                         completion.finish_reason), base)
        return plan, program, lacking, record_repairs(code, ran, fired) if fired else None

    def _prompt(self, operator: str, parent: Node | None, ctx: SearchContext, template: ProgramTemplate | None) -> str:
        context = prompts.header(ctx.task, ctx.data_preview, ctx.metric, ctx.lower_is_better, ctx.node_timeout,
                                 ctx.submission, ctx.domain, template)
        left = "\n\n" + prompts.budget(ctx.time_left, ctx.nodes_left, ctx.node_timeout)
        if operator == "debug":
            assert parent is not None
            return prompts.debug(context, parent, self.output_chars, template) + left
        body = (prompts.draft(context, "", template) if operator == "draft"
                else prompts.improve(context, "", parent, self.output_chars, template))  # type: ignore[arg-type]
        room = prompts.memory_budget(self.context_tokens(), self.max_tokens(),
                                     len(_system(template)) + len(body) + len(left), self.memory_chars)
        past = prompts.memory(ctx.journal, room)
        if operator == "draft":
            return prompts.draft(context, past, template) + left
        assert parent is not None
        return prompts.improve(context, past, parent, self.output_chars, template) + left


def _system(template: ProgramTemplate | None) -> str:
    return prompts.SYSTEM if template is None else prompts.SYSTEM_FILL
