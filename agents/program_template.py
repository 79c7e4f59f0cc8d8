"""A fill-in program for one competition: the harness writes the lines every solution needs (imports,
reading the data, the hold-out split, fitting, the competition's metric, the submission file) and the
model writes only the middle: features and an estimator.

Small models (Qwen2.5-Coder-1.5B) given only an outline write plausible programs that use names they never
defined (``X_valid``, ``y_train``), print another metric than the competition's, or write the submission
in the wrong shape; with the fixed lines in place they only have to get the features and the model right.
The fixed lines also turn what small models most often leave as text into numbers: raw texts (X one
text per row, or a DataFrame of only free-text columns, joined per row) become TF-IDF features; other
DataFrames keep the columns X and X_test share, with text columns of at most :data:`MAX_ONE_HOT` values
one-hot encoded (pandas.get_dummies over both), other text columns dropped and gaps filled with 0. Where
the test rows are data/test.csv, an X of train's rows followed by test's (encoded together) is split into X
and X_test; the target column is dropped from DataFrames X and X_test (left in, it leaks). A
HistGradientBoosting model given sparse features (TF-IDF) is replaced by LogisticRegression or Ridge. Each of
these three prints a ``harness repair NAME: ...`` line when it fires. The
validation score is the metric's plain call (no per-competition parameters: metrics that need some, such as
f1's average, have no template). A reply that copies the fixed
lines or does the harness's work itself has those lines taken out (:meth:`ProgramTemplate.cleaned`).
Every such rewrite is a named repair (:mod:`mle_env.agents.repairs`): a template made with fewer ``repairs``
leaves the others' code as the model wrote it, and :meth:`ProgramTemplate.filled` says which fired.

The template exists where the harness knows how to score the metric and the submission has one target
column (:func:`program_template` returns None otherwise: then the model writes the whole program).

The model's part must define these names:

- ``X``: the features of the training rows (DataFrame, numpy array or sparse matrix);
- ``y``: their target (set by the fixed lines when the data preview shows it is a column of train.csv);
- ``X_test``: the features of the test rows, in the order of ``sub``, with the same columns as ``X``;
- ``model``: an unfitted estimator with scikit-learn's ``fit`` and ``predict`` (``predict_proba`` for
  probability metrics, when it has one); a part that defines the others but no model gets a default one.

For images whose files the preview shows named by the id column, the fixed lines also name each row's file
(``train_files``, ``test_files``).
"""

from __future__ import annotations

import ast
import functools
import re
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from mle_env.agents.repairs import ALL, RUN_LINE

#: what an LLM agent's model writes (aide's and react's ``program`` option): "whole" programs (the default, as
#: the agents they are named after do), "fill" (only its part of this module's fill-in program, for small
#: models), or "auto" (fill in where the competition allows it, whole programs elsewhere)
PROGRAMS = ("whole", "fill", "auto")

BEGIN = "# ---- your part: begin ----"
END = "# ---- your part: end ----"
OUTLINE_BEGIN = "# >>> YOUR PART: replace each ... (add any code these need) <<<"
"""The line before the part in :meth:`ProgramTemplate.outline`."""
OUTLINE_END = "# >>> end of your part <<<"
"""The line after the part in :meth:`ProgramTemplate.outline`: a reply that copies the outline and fills it in
place has written its part once it writes this line (a proposer may stop the model there)."""

# metric -> (import, how predictions are made from fitted ``model`` on ``X``, the score expression, a check
# of the model before it is fitted). Metrics with parameters a plain call would get wrong (f1's average, a
# scored-rows mask) have no template.
_PROBABILITY = ("model.predict_proba(X)[:, 1] if hasattr(model, 'predict_proba') else model.decision_function(X) "
                "if hasattr(model, 'decision_function') else model.predict(X)")
_METRICS = {
    "auc": ("from sklearn.metrics import roc_auc_score", _PROBABILITY, "roc_auc_score(y_valid, predict(X_valid))", ""),
    "log_loss": ("from sklearn.metrics import log_loss", "np.clip(model.predict_proba(X)[:, 1], 1e-6, 1 - 1e-6)",
                 "log_loss(y_valid, predict(X_valid))",
                 "assert hasattr(model, 'predict_proba'), 'log loss needs probabilities: use a model with "
                 "predict_proba (e.g. LogisticRegression)'"),
    "accuracy": ("from sklearn.metrics import accuracy_score", "model.predict(X)",
                 "accuracy_score(y_valid, predict(X_valid))", ""),
    "rmsle": ("from sklearn.metrics import mean_squared_log_error", "np.clip(model.predict(X), 0, None)",
              "mean_squared_log_error(y_valid, predict(X_valid)) ** 0.5", ""),
    "rmse": ("from sklearn.metrics import mean_squared_error", "model.predict(X)",
             "mean_squared_error(y_valid, predict(X_valid)) ** 0.5", ""),
    "mae": ("from sklearn.metrics import mean_absolute_error", "model.predict(X)",
            "mean_absolute_error(y_valid, predict(X_valid))", ""),
}

_REGRESSION = {"rmsle", "rmse", "mae"}

# Text columns with more distinct values than this are dropped from a DataFrame X rather than one-hot encoded.
MAX_ONE_HOT = 50

# Imported for the model's part: small models often use these without importing them.
COMMON_IMPORTS = (
    "from sklearn.model_selection import train_test_split",
    "from sklearn.feature_extraction.text import TfidfVectorizer",
    "from sklearn.linear_model import LogisticRegression, Ridge",
    "from sklearn.ensemble import HistGradientBoostingClassifier, HistGradientBoostingRegressor, "
    "RandomForestClassifier, RandomForestRegressor",
)

_SLOTS = {
    "X": "the features of the rows of train, all numeric (DataFrame, numpy array or sparse matrix)",
    "y": "the target of the rows of train",
    "X_test": "the features of the rows of test (in the order of sub), with the same columns as X",
    "model": "an unfitted scikit-learn estimator",
}


_BRIEF_X = ("the features of the rows of train: numbers (DataFrame, numpy array or sparse matrix) or the column "
            "of raw text itself")

_SPLIT_NAMES = {"X_train", "X_valid", "y_train", "y_valid"}


def _harness_work(node: ast.stmt) -> bool:
    """Whether a top-level statement of a part does what the fixed lines do (see ProgramTemplate.cleaned)."""
    if _fitted(node) and len(node.value.args) >= 2:  # type: ignore[attr-defined]  # fit(X, y): the harness fits
        return True
    for n in ast.walk(node):
        if isinstance(n, ast.Name) and n.id in _SPLIT_NAMES:
            return True
        on_model = isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name) and n.value.id == "model"
        if on_model and (n.attr in ("fit", "score") or n.attr.startswith("predict")):  # type: ignore[union-attr]
            return True
        if isinstance(n, ast.Attribute) and n.attr in ("to_csv", "makedirs"):
            return True
        if isinstance(n, ast.Constant) and isinstance(n.value, str) and "VALIDATION_SCORE" in n.value:
            return True
        if isinstance(n, ast.Subscript) and isinstance(n.ctx, ast.Store) and isinstance(n.value, ast.Name) \
                and n.value.id == "sub":
            return True
    return False


class Filled(NamedTuple):
    """A part assembled into the whole program (see :meth:`ProgramTemplate.filled`)."""

    program: str
    missing: tuple[str, ...]
    """The names the part must define and does not (the program then holds the part as written)."""
    repairs: tuple[str, ...]
    """The assembly repairs (:data:`mle_env.agents.repairs.REPAIRS`) that changed the part, in a fixed order."""
    part: str
    """The part as it runs in the program."""


@dataclass(frozen=True)
class ProgramTemplate:
    """The fixed lines before (``head``) and after (``tail``) the model's part, and the names the part must
    define (``slots``: X, X_test and model, and y unless the head sets it)."""

    head: str
    tail: str
    slots: tuple[str, ...] = ("X", "y", "X_test", "model")
    target: str = ""
    """The target column (what ``y`` holds and the submission's column the predictions fill)."""
    notes: dict[str, str] = field(default_factory=dict)
    """What the outline says of a name, where this competition's data calls for more than the general words."""
    default_model: str = ""
    """The estimator the part gets when it defines every other name but no ``model`` ("": none)."""
    brief_tail: str = ""
    """The tail as :meth:`outline` shows it when ``brief``: its check of the part, then one comment."""
    repairs: frozenset[str] = ALL
    """The repairs (:mod:`mle_env.agents.repairs`) switched on: all by default; the others leave the model's
    code as it wrote it (the run-time ones are then not in :attr:`tail`)."""

    def assemble(self, part: str, truncated: bool = False, base: str = "") -> str:
        """The whole program with ``part`` (the model's code) between the markers. Small models often copy
        the fixed lines into their part, or do the harness's work there (fit, score, write the file): those
        lines are taken out (see :meth:`cleaned`; ``truncated``: the reply was cut off at the token limit;
        ``base``: the part this one changes)."""
        return self.filled(part, truncated, base)[0]

    def filled(self, part: str, truncated: bool = False, base: str = "") -> Filled:
        """The whole program (:meth:`assemble`), the names the part leaves undefined (:meth:`missing`) and
        the repairs that changed it, from one cleaning."""
        text, missing, fired = self._repaired(part, truncated, base)
        return Filled(f"{self.head}\n{BEGIN}\n{text}\n{END}\n{self.tail}\n", missing, fired, text)

    def cleaned(self, part: str, truncated: bool = False, base: str = "") -> str:
        """``part`` without the top-level statements that copy a fixed one (comments aside) or do the
        harness's work: use the hold-out split's names, fit or predict with ``model``, print the score, write
        files or fill ``sub``; and without the statements that then use what those defined. When what is left
        no longer defines every name the part must (or ``part`` is not valid Python), ``part`` as it is. A
        reply cut off at the token limit loses its unfinished last lines first.

        Also dropped: outline lines copied unfilled (``X = ...``), supervised fits (``search.fit(X, y)``)
        and, after a dropped ``search.fit(...)``, what uses ``search``. A line of several statements (a; b)
        is kept once.

        Repairs: ``X = <expression of test only>`` reads train instead (and ``X_test`` of train only, test);
        a ``test.drop(...)`` (or ``X_test.drop``) call without ``errors`` gets ``errors='ignore'`` (small
        models drop the target from test too, which has no such column: dropping what is absent changes
        nothing, and the fixed lines keep only the columns X and X_test share); ``.agg(' '.join, axis=1)``
        after one column (``train['review']``, a Series: copied from the fixed lines) is taken out; a part
        that changes ``base``
        (the parent's part, when improving or debugging), defines some of the names and leaves out others
        that ``base`` defines (X and X_test both or neither) runs after ``base``, less the lines of ``base``
        it makes redundant (:func:`_overridden`); and a part that defines
        every name but ``model`` gets :attr:`default_model`."""
        return self._repaired(part, truncated, base)[0]

    def missing(self, part: str, truncated: bool = False, base: str = "") -> tuple[str, ...]:
        """The names the part must define that ``part``, cleaned (see :meth:`cleaned`), does not (all of them
        when ``part`` is not Python); empty when it defines every one."""
        return self._repaired(part, truncated, base)[1]

    def _repaired(self, part: str, truncated: bool, base: str) -> tuple[str, tuple[str, ...], tuple[str, ...]]:
        """The cleaned part, the names it leaves undefined and the repairs that fired (none when the part is
        kept as written: not Python, or names left undefined)."""
        fired: set[str] = set()
        text, assigned = self._kept(part, truncated, fired)
        if text is None:
            return part.strip(), self.slots, ()
        missing = set(self.slots) - assigned
        together = ("X" in missing) == ("X_test" in missing)  # features and test features from the same code
        if missing and base and together and assigned & set(self.slots) and "after_parent" in self.repairs:
            base_text, base_assigned = self._kept(base, False, set())
            if base_text is not None and missing - {"model"} <= base_assigned:
                text, assigned = f"{_overridden(base_text, text)}\n{text}".strip(), assigned | base_assigned
                fired.add("after_parent")
        if "model" in self.slots and "model" not in assigned and self.default_model \
                and set(self.slots) - {"model"} <= assigned and "default_model" in self.repairs:
            text += f"\nmodel = {self.default_model}  # the harness's default: the part defined no model"
            assigned.add("model")
            fired.add("default_model")
        left = tuple(name for name in self.slots if name not in assigned)
        if left:
            return part.strip(), left, ()
        return text, left, tuple(name for name in _ASSEMBLY_ORDER if name in fired)

    @functools.cached_property
    def head_names(self) -> set[str]:
        """The names the head defines: the tables read, the imports, its functions, y when it sets it."""
        body = ast.parse(self.head).body
        defined = {node.name for node in body if isinstance(node, ast.FunctionDef)}
        imported = {(alias.asname or alias.name).split(".")[0] for node in body
                    if isinstance(node, (ast.Import, ast.ImportFrom)) for alias in node.names}
        return names_of([node for node in body if not isinstance(node, ast.FunctionDef)])[0] | defined | imported

    @functools.cached_property
    def _fixed_statements(self) -> set[str]:
        """The fixed lines' statements as ast.unparse writes them (parsed once: every cleaning compares)."""
        return {ast.unparse(node) for node in ast.parse(self.head + "\n" + self.tail).body}

    def _kept(self, part: str, truncated: bool, fired: set[str]) -> tuple[str | None, set[str]]:
        """The cleaned text of ``part`` (see :meth:`cleaned`, default model and base aside) and the names it
        assigns; (None, empty) when ``part`` is not Python. Adds the repairs that fired to ``fired``."""
        on = self.repairs
        tree, lines = _parsed(part, truncated and "cut_reply" in on)
        if tree is None:
            return None, set()
        if len(lines) < len(part.splitlines()):
            fired.add("cut_reply")
        fixed = self._fixed_statements
        dropped: set[str] = set()  # names assigned by dropped statements
        keep: list[ast.stmt] = []
        for node in tree.body:
            loads = {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
            stores = {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
            if "copied_fixed_line" in on and ast.unparse(node) in fixed:
                fired.add("copied_fixed_line")
                continue
            if "unfilled_outline_line" in on and _left_open(node):  # the outline's `X = ...`, copied
                fired.add("unfilled_outline_line")
                continue
            if "harness_work" in on and (_harness_work(node) or loads & dropped):
                dropped |= (stores | _fitted(node)) - set(self.slots)  # a search fitted on the split goes too
                fired.add("harness_work")
                continue
            dropped -= stores
            keep.append(node)
        swaps = _from_their_tables(keep, self.head) if "swapped_tables" in on else []
        edits = {"swapped_tables": swaps,
                 "tolerant_test_drop": _tolerant_drops(lines, keep, {(e[0], e[1]) for e in swaps})
                 if "tolerant_test_drop" in on else [],
                 "one_column_join": _joins_of_one_column(keep) if "one_column_join" in on else []}
        text = _joined(_edited(lines, [e for made in edits.values() for e in made]), keep, tree.body)
        try:
            ast.parse(text)
            fired.update(name for name, made in edits.items() if made)
        except SyntaxError:  # an edit the reply's layout did not allow: the statements as written
            text = _joined(lines, keep, tree.body)
        assigned = {n.id for node in keep for n in ast.walk(node) if isinstance(n, ast.Name)
                    and isinstance(n.ctx, ast.Store)}
        return text, assigned

    def outline(self, brief: bool = False) -> str:
        """The program as the model is shown it: the fixed lines around one line per name to define; ``brief``:
        the lines after the part told in one comment (:attr:`brief_tail`), not written out. Small models copy
        the code they see into their part (the tail's `.agg(' '.join, axis=1)` onto one column or a whole
        table), and a shorter prompt is read faster."""
        notes = {**_SLOTS, **({"X": _BRIEF_X} if brief else {}), **self.notes}
        slots = "\n".join(f"{name} = ...  # {notes[name]}" for name in self.slots)
        tail = self.brief_tail if brief and self.brief_tail else self.tail
        return f"{self.head}\n{OUTLINE_BEGIN}\n{slots}\n{OUTLINE_END}\n{tail}"

    def request(self, lacking: tuple[str, ...] = ()) -> str:
        """What to tell a model whose reply's part does not define the names in ``lacking`` (none: the reply
        had no code)."""
        what = ("Your reply has no code." if not lacking else
                f"Your part does not define {', '.join(lacking)} in Python code.")
        return (f"{what} Answer with your whole part only ({', '.join(self.slots)} = ...) as ONE fenced "
                "```python code block.")


_TEST_TABLES = {"test", "X_test"}
_ASSEMBLY_ORDER = ("cut_reply", "copied_fixed_line", "unfilled_outline_line", "harness_work", "swapped_tables",
                   "tolerant_test_drop", "one_column_join", "after_parent", "default_model")


def _announce(name: str, what: str) -> str:
    """The tail's line that records a run-time repair in the program's output (see :mod:`repairs`)."""
    return f"print(f\"{RUN_LINE} {name}: {what}\")"


def _rows(node: ast.stmt) -> range:
    return range(node.lineno - 1 - len(getattr(node, "decorator_list", [])), node.end_lineno or node.lineno)


def _joined(lines: list[str], keep: list[ast.stmt], body: list[ast.stmt]) -> str:
    """The text of the ``keep`` statements of ``body``: whole lines, each once (a line of several statements,
    a; b, is kept when all of them are; else the kept ones' own text, unedited)."""
    kept_ids = {id(node) for node in keep}
    shared = {row for node in body if id(node) not in kept_ids for row in _rows(node)}
    source = "\n".join(lines)
    out: dict[int | str, str] = {}
    for node in keep:
        if shared & set(_rows(node)):
            out[f"segment {id(node)}"] = ast.get_source_segment(source, node) or ""
        else:
            out.update({row: lines[row] for row in _rows(node)})
    return "\n".join(out.values()).strip()


def _overridden(base: str, part: str) -> str:
    """``base`` (valid Python) without the assignments that ``part`` (valid Python) makes redundant: those that
    assign only names ``part`` assigns again without reading them (``X /= 255`` reads X), whose value calls no
    method (a call such as ``vectorizer.fit_transform(...)`` or ``train.pop(...)`` may change what later lines
    use) and whose names no later statement of ``base`` reads. So a part sent twice runs once, and a part
    that changes such a line (``model = Ridge(alpha=3)``) runs instead of it."""
    tree, new = ast.parse(base), ast.parse(part)
    stores, read = names_of(new.body)  # ``read``: by the part, then also by the base lines after each one
    kept: list[ast.stmt] = []
    for node in reversed(tree.body):
        assigned = names_of([node])[0]
        pure = isinstance(node, ast.Assign) and not any(
            isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) for call in ast.walk(node.value))
        if not (pure and assigned and assigned <= stores and not assigned & read):
            kept.insert(0, node)
        read |= names_of([node])[1]
    return _joined(base.splitlines(), kept, tree.body)


def names_of(statements: list[ast.stmt]) -> tuple[set[str], set[str]]:
    """The names ``statements`` assign and those they read (an augmented assignment's target both)."""
    names = [n for node in statements for n in ast.walk(node) if isinstance(n, ast.Name)]
    augmented = {node.target.id for statement in statements for node in ast.walk(statement)
                 if isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name)}
    return ({n.id for n in names if isinstance(n.ctx, ast.Store)},
            {n.id for n in names if isinstance(n.ctx, ast.Load)} | augmented)


# An edit of a part's text: (row, start byte, end byte, replacement), rows from 0; ast's columns are UTF-8 bytes.
_Edit = tuple[int, int, int, str]


def _edited(lines: list[str], edits: list[_Edit]) -> list[str]:
    """``lines`` with the (non-overlapping) ``edits`` made, the last first so that earlier offsets hold."""
    lines = list(lines)
    for row, start, end, text in sorted(edits, key=lambda e: (e[0], e[1]), reverse=True):
        raw = lines[row].encode()
        lines[row] = (raw[:start] + text.encode() + raw[end:]).decode()
    return lines


def _from_their_tables(statements: list[ast.stmt], head: str) -> list[_Edit]:
    """Edits by which ``X = <expression of test only>`` reads train instead, and ``X_test = <expression of
    train only>`` test (when the head reads both tables): X must have one row per row of train, X_test one per
    row of test, and small models mix the two names up. Names inside ``len(...)`` or before ``.shape``/
    ``.index``/``.columns`` are sizes, not the rows read; an expression that also reads the name it assigns
    (``X = pd.concat([X, test])``) or binds the table's name (a comprehension) is left as it is."""
    if "test = pd.read_csv(" not in head:
        return []
    wrong = {"X": ("test", "train"), "X_test": ("train", "test")}
    edits: list[_Edit] = []
    for node in statements:
        if not (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)
                and node.targets[0].id in wrong):
            continue
        target = node.targets[0].id
        read, meant = wrong[target]
        sizes = {id(n) for sub in ast.walk(node.value) for n in ast.walk(sub)
                 if (isinstance(sub, ast.Call) and isinstance(sub.func, ast.Name) and sub.func.id == "len")
                 or (isinstance(sub, ast.Attribute) and sub.attr in ("shape", "index", "columns"))}
        tables = [n for n in ast.walk(node.value) if isinstance(n, ast.Name) and id(n) not in sizes]
        bound = any(isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store) for n in ast.walk(node.value)
                    if getattr(n, "id", None) == read)
        names = {n.id for n in tables}
        if read in names and meant not in names and target not in names and not bound:
            edits += [(n.lineno - 1, n.col_offset, n.end_col_offset, meant) for n in tables  # type: ignore[misc]
                      if n.id == read]
    return edits


def _tolerant_drops(lines: list[str], statements: list[ast.stmt], swapped: set[tuple[int, int]]) -> list[_Edit]:
    """Edits adding ``errors='ignore'`` to every ``test.drop(...)`` (or ``X_test.drop``) call of
    ``statements`` that does not pass ``errors`` (``swapped``: (row, column) of table names that
    :func:`_from_their_tables` renames, whose drops are left as they are)."""
    edits: list[_Edit] = []
    for node in statements:
        for call in ast.walk(node):
            if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and call.func.attr == "drop"
                    and isinstance(call.func.value, ast.Name) and call.func.value.id in _TEST_TABLES
                    and not any(k.arg == "errors" for k in call.keywords) and call.end_lineno is not None):
                continue
            receiver = call.func.value
            if (receiver.lineno - 1, receiver.col_offset) in swapped:
                continue
            given = [*call.args, *call.keywords]
            if given:  # right after the last argument (a comment or trailing comma may follow it)
                last = max(given, key=lambda a: (a.end_lineno or 0, a.end_col_offset or 0))
                edits.append(((last.end_lineno or 1) - 1, last.end_col_offset or 0, last.end_col_offset or 0,
                              ", errors='ignore'"))
            else:
                close = call.end_col_offset - 1  # type: ignore[operator]  # the call's closing parenthesis
                edits.append((call.end_lineno - 1, close, close, "errors='ignore'"))
    return edits


def _joins_of_one_column(statements: list[ast.stmt]) -> list[_Edit]:
    """Edits taking out ``.agg(' '.join, axis=1)`` (or ``.apply``) after one column, ``train['review']...``:
    a Series has no axis 1, and its values are already one text per row. Small models copy the call from the
    fixed lines, which join the text columns of a DataFrame."""
    edits: list[_Edit] = []
    for node in statements:
        for call in ast.walk(node):
            if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)
                    and call.func.attr in ("agg", "aggregate", "apply") and len(call.args) == 1
                    and isinstance(call.args[0], ast.Attribute) and call.args[0].attr == "join"
                    and isinstance(call.args[0].value, ast.Constant)
                    and any(k.arg == "axis" and isinstance(k.value, ast.Constant) and k.value.value in (1, "columns")
                            for k in call.keywords)):
                continue
            receiver = call.func.value
            root = receiver
            while isinstance(root, (ast.Call, ast.Attribute)):
                root = root.func if isinstance(root, ast.Call) else root.value
            one_column = isinstance(root, ast.Subscript) and isinstance(root.slice, ast.Constant) \
                and isinstance(root.slice.value, str)
            if one_column and call.end_lineno == receiver.end_lineno:
                edits.append((call.lineno - 1, receiver.end_col_offset or 0, call.end_col_offset or 0, ""))
    return edits


def _fitted(node: ast.stmt) -> set[str]:
    """The name a statement ``name.fit(...)`` fits (empty for any other statement)."""
    call = node.value if isinstance(node, ast.Expr) else None
    if isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and call.func.attr == "fit" \
            and isinstance(call.func.value, ast.Name):
        return {call.func.value.id}
    return set()


def _left_open(node: ast.stmt) -> bool:
    """Whether ``node`` is an outline line the model copied without filling it in (``X = ...``)."""
    return isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant) and node.value.value is Ellipsis


def _parsed(part: str, truncated: bool) -> tuple[ast.Module | None, list[str]]:
    """The part's syntax tree and lines, or (None, lines) when it is not Python; for a ``truncated`` reply
    (cut off at the token limit), its longest start of whole lines that is, without its last line (which the
    cut almost always falls in, and can leave valid: `X_test = vec` of `X_test = vectorizer.transform(...)`)."""
    lines = part.splitlines()
    for end in range(len(lines) - 1, 0, -1) if truncated and len(lines) > 1 else (len(lines),):
        try:
            return ast.parse("\n".join(lines[:end])), lines[:end]
        except SyntaxError:
            continue
    return None, lines


def part_of(program: str) -> str:
    """The model's part of an assembled program (the whole text when it has no markers)."""
    if BEGIN in program and END in program:
        return program.split(BEGIN, 1)[1].split(END, 1)[0].strip()
    return program.strip()


def program_template(submission: dict[str, Any] | None, metric: str, domain: str | None = None,
                     data_preview: str = "", repairs: frozenset[str] = ALL) -> ProgramTemplate | None:
    """The template for a competition (its submission spec, metric name, domain, and a data preview or file
    listing that shows whether there is a data/train.csv and whether the test rows are data/test.csv or files
    of a folder), or None when the metric, the submission's shape or the data's layout has no template.
    ``repairs``: those switched on (see :mod:`mle_env.agents.repairs`)."""
    submission = submission or {}
    targets = submission.get("targets") or []
    if metric not in _METRICS or len(targets) != 1:
        return None
    if data_preview and not re.search(r"(^|[\s/])data/train\.csv\b", data_preview):
        return None  # the training rows are not one table the fixed lines can read
    target = targets[0]
    sample = submission.get("sample") or "sample_submission.csv"
    id_column = submission.get("id_column")
    header = submission.get("header") or ([id_column] if id_column else []) + targets
    ids = f", dtype={{'{id_column}': str}}" if id_column else ""
    metric_import, prediction, score, check = _METRICS[metric]
    lines = ["import os", "import numpy as np", "import pandas as pd", *COMMON_IMPORTS, metric_import]
    if domain == "image":
        lines += ["from PIL import Image",
                  "def load_image(path, size=None):  # one image as a flat array of gray levels in [0, 1]",
                  "    image = Image.open(path).convert('L')",
                  "    return np.asarray(image.resize(size) if size else image, dtype=np.float32).ravel() / 255"]
    files_by_id = ids if domain == "image" else ""  # ids name files (keep their leading zeros)
    lines.append(f"train = pd.read_csv('./data/train.csv'{files_by_id})  # the training rows")
    reads_test = "data/test.csv" in data_preview or not data_preview
    if reads_test:
        lines.append(f"test = pd.read_csv('./data/test.csv'{files_by_id})  # the rows to predict, in the order of sub")
    else:
        folder = re.search(r"data/(test[^/\s]*)/", data_preview)
        where = f"./data/{folder.group(1)}/" if folder else "./data/"
        lines.append(f"# the test items are the files in {where}, one per row of sub, named by sub['{id_column}']"
                     if id_column else f"# the test items are the files in {where}, one per row of sub")
    lines.append(f"sub = pd.read_csv('./data/{sample}'{ids})  # the submission's rows and columns, to fill in")
    slots, notes = ("X", "y", "X_test", "model"), {}
    if not reads_test:
        notes["X_test"] = _SLOTS["X_test"].replace("the rows of test (in the order of sub)", "the test items of sub")
    image_files = _image_files(data_preview, id_column, reads_test) if domain == "image" else None
    if image_files:
        lines += image_files
        notes["X"] = _SLOTS["X"] + (": images as rows, e.g. np.stack([load_image(f) for f in train_files]) "
                                    "(load_image(f, size=(64, 64)) when their sizes differ)")
        if any(line.startswith("test_files") for line in image_files):
            notes["X_test"] = (notes.get("X_test") or _SLOTS["X_test"]) + (", e.g. np.stack([load_image(f) for f "
                                                                           "in test_files])")
    elif domain == "image":
        notes["X"] = _SLOTS["X"] + ("; images: stack load_image(path) of each image (size=(64, 64) when their "
                                    "sizes differ)")
    if re.search(rf"(?m)^(\./)?data/train\.csv:.*\b{re.escape(target)} \(", data_preview):  # a column of train
        lines.append(f"y = train['{target}']  # the target")
        slots = ("X", "X_test", "model")
    sparse_model = "Ridge()" if metric in _REGRESSION else "LogisticRegression(C=4, max_iter=1000)"
    tail = [
        f"unwritten = [name for name, value in zip({slots!r}, ({', '.join(slots)})) if value is Ellipsis]",
        "assert not unwritten, f'your part left {unwritten} as ...: replace each ... with code'",
        *(["if np.shape(X)[0] == len(train) + len(test) != len(y):  # X of train's rows, then test's: split it",
           "    " + _announce("split_train_and_test_rows", "X held {np.shape(X)[0]} rows, train's then test's: "
                                                      "split into X and X_test"),
           "    X, X_test = X[:len(train)], X[len(train):]"]
          if reads_test and "split_train_and_test_rows" in repairs else []),
        *([f"if isinstance(X, pd.DataFrame) and isinstance(X_test, pd.DataFrame) and '{target}' in X.columns:"
           "  # the target is no feature",
           "    " + _announce("target_column_dropped", f"X held the target column {target!r}: dropped"),
           f"    X, X_test = X.drop(columns=['{target}']), X_test.drop(columns=['{target}'], errors='ignore')"]
          if "target_column_dropped" in repairs else []),
        "assert np.ndim(X) < 2 or np.shape(X)[1] > 0, 'X has no columns: keep the columns that carry information "
        "(a column of raw text too: it becomes TF-IDF features)'",
        "def is_text(values):",
        "    return np.ndim(values) == 1 and pd.api.types.infer_dtype(np.asarray(values, dtype=object), "
        "skipna=True) == 'string'",
        "def free_text(frame):  # its text columns of more than a few values",
        "    return [c for c in frame.columns if not pd.api.types.is_numeric_dtype(frame[c]) and frame[c].nunique() > "
        f"{MAX_ONE_HOT}]",
        "if isinstance(X, pd.DataFrame) and isinstance(X_test, pd.DataFrame):  # only free texts: one text per row",
        "    shared = [c for c in X.columns if c in X_test.columns]",
        "    if shared and free_text(X[shared]) == shared:",
        "        X, X_test = (frame[shared].fillna('').astype(str).agg(' '.join, axis=1) for frame in (X, X_test))",
        "if is_text(X):  # raw texts: TF-IDF features",
        "    vectorizer = TfidfVectorizer(ngram_range=(1, 2), min_df=2, sublinear_tf=True)",
        "    X = vectorizer.fit_transform(pd.Series(X).fillna('').astype(str))",
        "    X_test = vectorizer.transform(pd.Series(X_test).fillna('').astype(str))",
        *(["if hasattr(X, 'tocsr') and type(model).__name__.startswith('HistGradientBoosting'):  # dense input only",
           "    " + _announce("sparse_model_swapped", "{type(model).__name__} takes no sparse features such as "
                                                  f"TF-IDF: the harness fits {sparse_model} instead"),
           f"    model = {sparse_model}"] if "sparse_model_swapped" in repairs else []),
        "if isinstance(X, pd.Series):  # one feature column",
        "    X, X_test = X.to_frame(), pd.Series(X_test).to_frame(X.name)",
        "if isinstance(X, pd.DataFrame) and isinstance(X_test, pd.DataFrame):  # shared columns, text one-hot",
        "    shared = [c for c in X.columns if c in X_test.columns]",
        "    assert shared, f'X and X_test have no column in common (X: {list(X.columns)[:8]}, X_test: "
        "{list(X_test.columns)[:8]}): make them with the same feature columns'",
        "    both = pd.concat([X[shared], X_test[shared]])",
        "    both = pd.get_dummies(both.drop(columns=free_text(both))).fillna(0)",
        "    X, X_test = both.iloc[:len(X)], both.iloc[len(X):]",
        "assert np.shape(X_test)[0] == len(sub), f'X_test has {np.shape(X_test)[0]} rows, the submission {len(sub)}"
        f": make X_test from {'test' if reads_test else 'the test items'}, one row each'",
        "assert np.shape(X)[0] == len(y), f'X has {np.shape(X)[0]} rows, y {len(y)}: make X from train, one row "
        "per row of train'",
        *([check] if check else []),
        "X_train, X_valid, y_train, y_valid = train_test_split(X, y, test_size=0.2, random_state=0)",
        "model.fit(X_train, y_train)",
        "def predict(X):",
        f"    return {prediction}",
        f"score = {score}",
        "print(f'VALIDATION_SCORE: {score:.6f}')",
        "model.fit(X, y)  # refit on every training row",
        f"sub['{target}'] = predict(X_test)",
        "os.makedirs('./submission', exist_ok=True)",
        f"sub[{header!r}].to_csv('./submission/submission.csv', index=False)",
    ]
    default_model = ("Ridge() if np.ndim(X) == 1 or hasattr(X, 'tocsr') else "  # texts become sparse features
                     "HistGradientBoostingRegressor(max_iter=200)" if metric in _REGRESSION
                     else "LogisticRegression(max_iter=1000)")
    fitted = ("the probabilities of model (predict_proba, else decision_function or predict) on X_test"
              if metric == "auc" else "model.predict_proba(X_test)[:, 1]" if metric == "log_loss"
              else "model.predict(X_test)")
    brief = (f"{tail[0]}\n{tail[1]}\n# ... then the harness: raw texts become TF-IDF features; of DataFrames it keeps "
             "the columns X and X_test share, one-hot encodes their text columns and fills gaps with 0; it holds out "
             f"20 % of the rows, fits model on the rest, prints the {metric} as VALIDATION_SCORE, refits on every "
             f"row and writes sub['{target}'] = {fitted} to ./submission/submission.csv (columns {header}).")
    return ProgramTemplate(head="\n".join(lines), tail="\n".join(tail), slots=slots, target=target, notes=notes,
                           default_model=default_model, brief_tail=brief, repairs=frozenset(repairs))


def _image_files(data_preview: str, id_column: str | None, reads_test: bool) -> list[str] | None:
    """Fixed lines naming each row's image file (``train_files``, ``test_files``), when the preview shows
    the training images (and, without a test.csv, the test images) as a folder of files named by the id
    column, e.g. ``./data/train/: folder of 4000 files, e.g. 00000.png, ...`` with ids like ``02183``
    (the extension is added) or ``02183.png``; else None."""
    folder = r"(?m)^\./data/((?:train|test)[^/\s]*)/: folder of \d+ files, e\.g\. [^,\s]*?(\.\w+)[,\s]"
    folders = dict(re.findall(folder, data_preview + "\n"))
    train = next((f for f in folders if f.startswith("train")), None)
    test = next((f for f in folders if f.startswith("test")), None)
    if not id_column or train is None or (test is None and not reads_test):
        return None
    train_id, test_id = _first_value(data_preview, "train", id_column), _first_value(data_preview, "test", id_column)
    if train_id is None or (reads_test and test_id is None):
        return None
    rows = "test" if reads_test else "sub"

    def files(name: str, folder: str, table: str, example: str | None) -> str:
        extension = "" if example is not None and example.endswith(folders[folder]) else f" + '{folders[folder]}'"
        return f"{name} = './data/{folder}/' + {table}['{id_column}']{extension}"

    lines = [files("train_files", train, "train", train_id) + "  # each row's image file"]
    if test is not None:
        lines.append(files("test_files", test, rows, test_id if reads_test else train_id)
                     + f"  # each test item's image file, in the order of {rows}")
    return lines


def _first_value(data_preview: str, table: str, column: str) -> str | None:
    """The value of ``column`` in the first row the preview shows of ``./data/<table>.csv`` (None when the
    preview does not show that table, that column or a row that splits into its columns)."""
    match = re.search(rf"(?m)^\./data/{table}\.csv: .*? columns: (.*)\n\s+row: (.*)$", data_preview)
    if match is None:
        return None
    names = [c.rsplit(" (", 1)[0] for c in match.group(1).split(", ")]
    values = match.group(2).split(", ")
    if column not in names or len(values) != len(names):
        return None
    value = values[names.index(column)]
    return None if value.endswith("...") or "/" in value else value  # clipped, or a path: not a file's name
