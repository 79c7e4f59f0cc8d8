"""``mle-env doctor [--split S | IDS]``: what stands between you and prepared data, without downloading anything
(see mle_env.prepare.doctor): Kaggle credentials, each competition's rules (accepted or the page to open),
sizes against free disk, and which competitions are prepared and valid. Exit status 0 when nothing stands in
the way of preparing them all, 1 otherwise."""

from __future__ import annotations

import argparse
import json

from mle_env.display_text import terminal_safe
from mle_env.units import human_bytes


def add_parser(sub: argparse._SubParsersAction) -> None:
    from mle_env.competition.spec import SPLITS

    p = sub.add_parser("doctor", help="check Kaggle credentials, rules, disk and prepared data (downloads nothing)")
    p.add_argument("competitions", nargs="*", metavar="ID", help="ids or aliases (default: --split, else all)")
    p.add_argument("--split", choices=SPLITS, help="every competition of a split")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.set_defaults(func=cmd_doctor)


def cmd_doctor(args: argparse.Namespace) -> int:
    from mle_env.cli.competitions import console
    from mle_env.competition.registry import get_spec, list_competitions
    from mle_env.prepare.doctor import check

    ids = ([get_spec(name).id for name in args.competitions] if args.competitions
           else list_competitions(args.split))
    report = check([get_spec(cid) for cid in ids])
    rows = report["competitions"]
    blocked = [r for r in rows if r["prepared"] != "yes" and r["kaggle"] and r["rules"] != "accepted"]
    ok = report["disk"]["enough"] and not blocked
    if args.json:
        print(json.dumps(report, indent=2))
        return 0 if ok else 1
    out = console()
    kaggle = report["kaggle"]
    out.print(terminal_safe("Kaggle: " + ("credentials accepted" if kaggle["ok"] and not kaggle["problem"] else
                                          kaggle["problem"] or "not needed")), markup=False, soft_wrap=True)
    for r in rows:
        size = human_bytes(r["raw_bytes"]) if r["raw_bytes"] is not None else "size unknown"
        rules = r["rules"] + (f" ({r['rules_url']})" if r["rules"] == "not accepted" else "")
        out.print(terminal_safe(f"{r['id']}\n  {r['split']}; raw {size}; prepared {r['prepared']}; rules {rules}"),
                  markup=False, soft_wrap=True)
    disk = report["disk"]
    out.print(terminal_safe(f"disk: {human_bytes(disk['needed_bytes'])} needed to prepare what is not prepared, "
                            f"{human_bytes(disk['free_bytes'])} free under {disk['home']}"
                            + ("" if disk["enough"] else ": not enough")), markup=False, soft_wrap=True)
    if blocked:
        out.print(terminal_safe(f"{len(blocked)} competition(s) cannot be downloaded until their rules are accepted "
                                "(or Kaggle can be asked): see 'rules' above"), markup=False, soft_wrap=True)
    return 0 if ok else 1
