"""``mle-env audit RUN_DIR|EPISODE...``: review recorded episodes for rule violations (see mle_env.audit).

Prints one line per flagged episode (what flagged it and at which steps) and the totals, and writes audit.csv
and audit.json into ``--out`` (default: the first folder given). Exit status: 0 nothing flagged, 1 something
flagged, 2 an error. The agent's text in the evidence is printed terminal_safe.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from mle_env.display_text import terminal_safe


def add_parser(sub: argparse._SubParsersAction) -> None:
    from mle_env.audit.checks import ORACLE_THRESHOLD
    from mle_env.audit.similarity import THRESHOLD

    p = sub.add_parser("audit", help="review recorded episodes for rule violations (writes audit.csv, audit.json)")
    p.add_argument("paths", nargs="+", type=Path, metavar="RUN_DIR",
                   help="a run directory (mle-env eval's --out, mle-env run's record dir), an episode's folder or "
                        "trajectory files")
    p.add_argument("--out", type=Path, help="where audit.csv and audit.json go (default: the first folder given)")
    p.add_argument("--references", type=Path, metavar="DIR",
                   help="reference solutions to compare the episodes' code with: DIR/<competition id>/*.py")
    p.add_argument("--llm", action="store_true",
                   help="also ask MLE-bench's three questions of an OpenAI-compatible model "
                        "(--base-url, --model, or $MLE_ENV_LLM_BASE_URL)")
    p.add_argument("--model", help="the model for --llm (default: the server's only model)")
    p.add_argument("--base-url", help="the OpenAI-compatible server for --llm (default $MLE_ENV_LLM_BASE_URL)")
    p.add_argument("--oracle-threshold", type=int, default=ORACLE_THRESHOLD,
                   help=f"validate calls from which validate counts as used as an oracle (default {ORACLE_THRESHOLD})")
    p.add_argument("--similarity-threshold", type=float, default=THRESHOLD,
                   help=f"code similarity (0-1) from which a reference pair is flagged (default {THRESHOLD})")
    p.set_defaults(func=cmd_audit)


def cmd_audit(args: argparse.Namespace) -> int:
    from mle_env.audit import audit
    from mle_env.cli.competitions import console

    out = args.out or next((p for p in args.paths if p.is_dir()), Path.cwd())
    client = None
    if args.llm:
        from mle_env.agents.llm import LLMClient

        client = LLMClient(base_url=args.base_url, model=args.model)
    try:
        summary = audit(args.paths, out, client=client, references=args.references,
                        oracle_threshold=args.oracle_threshold, similarity_threshold=args.similarity_threshold)
    finally:
        if client is not None:
            client.close()
    printer = console()
    for episode in summary["per_episode"]:
        if not episode["flagged"]:
            continue
        reasons = [f"{name} (steps {' '.join(str(f['step']) for f in c['findings'] if f['step'] is not None) or '-'})"
                   for name, c in episode["checks"].items() if c["flagged"]]
        reasons += [f"model: {name}" for name, q in (episode["questions"] or {}).items() if q["answer"] is True]
        reasons += [f"similar to {p['reference']} ({p['similarity']:.2f})"
                    for p in (episode["similarity"] or {}).get("flagged", [])[:3]]
        printer.print(terminal_safe(f"flagged {episode['trajectory']}: {'; '.join(reasons)}"), markup=False,
                      soft_wrap=True)
    by_check = ", ".join(f"{name} {n}" for name, n in summary["by_check"].items() if n) or "none"
    printer.print(terminal_safe(f"{summary['flagged']} of {summary['episodes']} episodes flagged (rules: {by_check}"
                                + (f"; model: {summary['by_question']}" if summary["by_question"] is not None else "")
                                + (f"; similar code: {summary['similar']}" if summary["similar"] is not None else "")
                                + f"); wrote {out / 'audit.csv'} and {out / 'audit.json'}"), markup=False,
                  soft_wrap=True)
    return 1 if summary["flagged"] else 0
