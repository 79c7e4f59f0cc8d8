"""The fill-in program template: assembled with a model's part it runs in a real episode, prints the
competition's metric on held-out rows and writes a submission the validator accepts; a broken part fails
with a message that names the problem; competitions without a template get None."""

from __future__ import annotations

import ast
import json
from pathlib import Path
from typing import Any

import pytest

import mle_env
from mle_env.agents.program_template import BEGIN, END, part_of, program_template
from mle_env.agents.repairs import ALL, RUN_LINE, fired_at_run
from mle_env.agents.scripted import validation_score
from mle_env.agents.task_facts import PREVIEW
from mle_env.text_interface import extract_code

# Real replies of Qwen2.5-Coder-1.5B in fill-in mode (benchmarks/llm_agents.py), with what the program did then.
RECORDED = [json.loads(line) for line in (Path(__file__).parent / "data" / "completions_fill.jsonl").read_text()
            .splitlines() if line.strip()]
# Real 1.5B replies that failed before the cleaning repaired them: test.drop of the target, no model.
REPAIRED = [json.loads(line) for line in (Path(__file__).parent / "data" / "completions_fill_repaired.jsonl")
            .read_text().splitlines() if line.strip()]

PARTS = {
    "practice-house-prices": (
        "from sklearn.ensemble import HistGradientBoostingRegressor\n"
        "cols = [c for c in test.columns if c != 'Id']\n"
        "both = pd.get_dummies(pd.concat([train[cols], test[cols]])).fillna(0)\n"
        "X, X_test, y = both[:len(train)], both[len(train):], train['SalePrice']\n"
        "model = HistGradientBoostingRegressor(max_iter=50)"),
    "practice-fine-food-reviews": (  # TfidfVectorizer: imported by the fixed lines
        "from sklearn.linear_model import LogisticRegression\n"
        "vectorizer = TfidfVectorizer(min_df=2)\n"
        "X = vectorizer.fit_transform(train['review'])\nX_test = vectorizer.transform(test['review'])\n"
        "y = train['great']\nmodel = LogisticRegression(max_iter=300)"),
    "practice-mnist-digits": (
        "from sklearn.linear_model import LogisticRegression\n"
        "def load(folder, ids):\n"
        "    return np.stack([np.asarray(Image.open(f'./data/{folder}/{i}.png'), dtype=np.float32).ravel() / 255"
        " for i in ids])\n"
        "X, y, X_test = load('train', train['id']), train['label'], load('test', sub['id'])\n"
        "model = LogisticRegression(max_iter=100)"),
}


def _defined(part: str) -> list[str]:
    """The names of X, y, X_test, model that the part's top-level statements assign."""
    names = {n.id for node in ast.parse(part).body if isinstance(node, ast.Assign)
             for target in node.targets for n in ast.walk(target) if isinstance(n, ast.Name)}
    return sorted(names & {"X", "y", "X_test", "model"})


def _run(cid: str, part: str, truncated: bool = False, base: str = "", repairs: frozenset[str] = ALL
         ) -> tuple[dict[str, Any], str, str]:
    """Run the assembled program in a fresh episode: its observation, the validator's verdict, the program
    (``truncated``: the part is a reply cut off at the token limit; ``base``: the part it changes; ``repairs``:
    those switched on)."""
    env = mle_env.make(cid, sandbox="local", time_limit=600)
    try:
        _, info = env.reset(seed=0)
        preview = env.step({"type": "python", "code": PREVIEW, "timeout": 60})[0]["stdout"]  # as AIDE sees the data
        template = program_template(info["submission"], info["metric"]["name"], info["domain"], preview, repairs)
        assert template is not None
        program = template.assemble(part, truncated, base)
        ran = env.step({"type": "python", "code": program, "timeout": 300})[0]
        verdict = env.step({"type": "validate"})[0]["stdout"].strip()
        return ran, verdict, program
    finally:
        env.close()


@pytest.mark.parametrize("cid", sorted(PARTS))
@pytest.mark.slow
def test_a_filled_in_template_scores_itself_and_writes_a_valid_submission(practice_home: Path, cid: str) -> None:
    ran, verdict, program = _run(cid, PARTS[cid])
    assert int(ran["exit_code"]) == 0, ran["stderr"][-500:]
    score = validation_score(ran["stdout"])
    assert score is not None and verdict == "valid"
    # the competition's metric: RMSLE of a boosted model is well under 1; AUC and accuracy are far above chance
    assert (score < 0.3) if cid == "practice-house-prices" else (score > 0.75)
    assert program.index(BEGIN) < program.index("VALIDATION_SCORE")
    assert "y = train[" in program.split(BEGIN)[0]  # the preview shows the target column: the head sets y


def test_a_part_with_the_wrong_test_rows_fails_with_a_message_naming_them(practice_home: Path) -> None:
    part = PARTS["practice-fine-food-reviews"].replace("X_test = vectorizer.transform(test['review'])", "X_test = X")
    ran, verdict, _ = _run("practice-fine-food-reviews", part)
    assert int(ran["exit_code"]) != 0
    assert "X_test has 4000 rows, the submission 1000: make X_test from test, one row each" in ran["stderr"]
    assert verdict != "valid"


@pytest.mark.slow
def test_a_part_that_drops_every_feature_fails_with_a_message_naming_the_columns(practice_home: Path) -> None:
    """The real 1.5B habit (react on fine-food): drop the text columns as non-numeric, leaving nothing, or
    only the target (no feature: it goes too); pandas' own error was "No objects to concatenate"."""
    drops = ("['id', 'product', 'review', 'great']", "['id', 'product', 'review']")
    parts = [f"X = train.drop(columns={drop})\nX_test = test.drop(columns={drop}, errors='ignore')" for drop in drops]
    parts.append("X = train[['product']]\nX_test = test[['review']]")
    messages = ["X has no columns: keep the columns that carry"] * 2 + [
        "X and X_test have no column in common (X: ['product'], X_test: ['review']): make them with the same "
        "feature columns"]
    for part, message in zip(parts, messages, strict=True):
        ran, verdict, _ = _run("practice-fine-food-reviews", f"{part}\nmodel = LogisticRegression()")
        assert int(ran["exit_code"]) != 0 and message in ran["stderr"] and verdict != "valid", ran["stderr"][-300:]


@pytest.mark.slow
def test_an_x_of_train_and_test_rows_together_is_split(practice_home: Path) -> None:
    """react's 1.5B parts on house prices: X one-hot encoded over train and test together, X_test = X; and
    the same keeping the target column, which test lacks (filled with 0): left in, it leaked (validation
    0.053, the test predictions all near 63,000: RMSLE 1.058)."""
    for drop in ("['Id', 'SalePrice']", "['Id']"):
        part = (f"X = pd.get_dummies(pd.concat([train.drop(columns={drop}), test.drop(columns=['Id'])])).fillna(0)\n"
                "X_test = X\nmodel = HistGradientBoostingRegressor(max_iter=50)")
        ran, verdict, _ = _run("practice-house-prices", part)
        assert int(ran["exit_code"]) == 0 and verdict == "valid", ran["stderr"][-300:]
        assert 0.1 < validation_score(ran["stdout"]) < 0.3  # type: ignore[operator]
        assert fired_at_run(ran["stdout"]) == ["split_train_and_test_rows"] + (
            ["target_column_dropped"] if drop == "['Id']" else [])


@pytest.mark.slow
def test_sparse_features_for_histgradientboosting_get_a_model_that_takes_them(practice_home: Path) -> None:
    """The commonest crash of AIDE's 1.5B nodes (11 of 45): TF-IDF features given to HistGradientBoosting,
    which takes dense input only. The harness fits its sparse-ready model instead and says so."""
    part = "X = train['review']\nX_test = test['review']\nmodel = HistGradientBoostingClassifier(max_iter=50)"
    ran, verdict, _ = _run("practice-fine-food-reviews", part)
    assert int(ran["exit_code"]) == 0 and verdict == "valid", ran["stderr"][-300:]
    assert (f"{RUN_LINE} sparse_model_swapped: HistGradientBoostingClassifier takes no sparse features such as "
            "TF-IDF: the harness fits LogisticRegression(C=4, max_iter=1000) instead") in ran["stdout"]
    assert validation_score(ran["stdout"]) > 0.8  # type: ignore[operator]
    assert fired_at_run(ran["stdout"]) == ["sparse_model_swapped"]
    # switched off, the model's choice runs as it wrote it, and fails as it then does
    ran, verdict, _ = _run("practice-fine-food-reviews", part, repairs=ALL - {"sparse_model_swapped"})
    assert int(ran["exit_code"]) != 0 and "sparse" in ran["stderr"] and verdict != "valid", ran["stderr"][-300:]
    assert RUN_LINE not in ran["stdout"]


def test_template_fits_the_data_layout_and_declines_what_it_cannot_score() -> None:
    one = {"header": ["id", "y"], "id_column": "id", "targets": ["y"], "sample": "sample_submission.csv"}
    csv = program_template(one, "auc", "tabular", "data/test.csv  1 KB\ndata/train.csv  3 KB")
    assert csv is not None and "test = pd.read_csv('./data/test.csv')" in csv.head
    assert "predict_proba" in csv.tail and "roc_auc_score" in csv.head
    folder = program_template(one, "accuracy", "image", "data/test/  10 files\ndata/train.csv  1 KB")
    assert folder is not None and "read_csv('./data/test.csv'" not in folder.head
    assert "from PIL import Image" in folder.head and "read_csv('./data/train.csv', dtype={'id': str})" in folder.head
    assert "np.clip(model.predict(X), 0, None)" in program_template(one, "rmsle").tail  # type: ignore[union-attr]
    assert program_template({**one, "targets": ["a", "b"]}, "auc") is None  # several target columns
    assert program_template(one, "map@3") is None  # a metric the harness does not score
    assert "YOUR PART" in csv.outline() and BEGIN not in csv.outline() and END not in csv.outline()
    assert part_of("no markers\n") == "no markers"


def test_copies_of_the_fixed_lines_and_the_harness_work_are_taken_out_of_a_part() -> None:
    """Real 1.5B habits: the reply repeats the outline, or scores and writes the submission itself."""
    one = {"header": ["Id", "SalePrice"], "id_column": "Id", "targets": ["SalePrice"],
           "sample": "sample_submission.csv"}
    template = program_template(one, "rmsle", "tabular", "./data/train.csv: Id (number), SalePrice (number)\n"
                                                         "./data/test.csv: Id (number)")
    assert template is not None and "y = train['SalePrice']" in template.head
    features = ("X = train.drop(columns=['Id', 'SalePrice'])\nX_test = test.drop(columns=['Id'], errors='ignore')\n"
                "model = Ridge()")
    reply = (f"{template.head}\n{features}\n"
             "X_train, X_valid, y_train, y_valid = train_test_split(X, y, test_size=0.25)\n"
             "model.fit(X_train, y_train)\nscore = mean_squared_log_error(y_valid, model.predict(X_valid)) ** 0.5\n"
             "print('VALIDATION_SCORE:', score)\nsub['SalePrice'] = model.predict(X_test)\n"
             "sub.to_csv('./submission/submission.csv', index=False)")
    assert template.cleaned(reply) == features
    assert part_of(template.assemble(reply)) == features
    # what uses a dropped statement's result goes too (else: NotFittedError, NameError on preds)
    own = (f"{features}\nmodel.fit(X, y)\npreds = model.predict(X_test)\n"
           "out = pd.DataFrame({'Id': test['Id'], 'SalePrice': preds})\nout.to_csv('submission.csv')")
    assert template.cleaned(own) == features
    # a slot defined only from the split's names: the reply is kept whole (it fails on its own terms)
    via_split = "X_train = train.drop(columns=['SalePrice'])\nX = X_train\nX_test = test\nmodel = Ridge()"
    assert template.cleaned(via_split) == via_split
    # the model's own helper keeps its body, even a line equal to an indented fixed line
    helper = ("def features(frame):\n    vectorizer = TfidfVectorizer(ngram_range=(1, 2), min_df=2, sublinear_tf=True)"
              "\n    return frame\nX = features(train)\nX_test = features(test)\nmodel = Ridge()")
    assert template.cleaned(helper) == helper
    cut = f"{features}\ngrid = GridSearchCV(model, {{'alpha': [0.1,"  # a reply cut off at the token limit
    assert template.cleaned(cut, truncated=True) == features and template.cleaned(cut) == cut
    broken = "X = (\nmodel = Ridge()"
    assert template.cleaned(broken) == broken  # not Python: as it is (the run reports the syntax error)


@pytest.mark.parametrize("record", RECORDED, ids=[f"{r['competition']}-{r['operator']}-{r['ran']['failure']}-{i}"
                                                  for i, r in enumerate(RECORDED)])
def test_recorded_replies_become_parts_without_the_harness_work(record: dict[str, Any]) -> None:
    _, code = extract_code(record["content"])
    template = program_template(*(_TEMPLATE_INPUTS[record["competition"]]))
    assert template is not None
    part = template.cleaned(code)
    compile(part, "<part>", "exec")
    if set(record["expect"]["defines"]) >= set(template.slots):
        assert "VALIDATION_SCORE" not in part and "to_csv" not in part and "train_test_split(" not in part
        assert _defined(part) == record["expect"]["defines"]
    else:  # a reply that never defines X_test: kept whole, so the program fails on the name it lacks
        assert part == code.strip() and "X_test" not in _defined(part)


@pytest.mark.slow
def test_recorded_text_replies_run_to_a_valid_submission(practice_home: Path) -> None:
    """The reply that crashed on raw text (the old template) and the one that worked both give a valid file."""
    texts = [r for r in RECORDED if r["competition"] == "practice-fine-food-reviews" and r["operator"] == "draft"]
    assert [r["ran"]["failure"] for r in texts] == ["crash", "ok"]
    for record in texts:
        ran, verdict, _ = _run(record["competition"], extract_code(record["content"])[1])
        assert int(ran["exit_code"]) == 0 and verdict == "valid", ran["stderr"][-300:]
        assert validation_score(ran["stdout"]) > 0.8  # type: ignore[operator]


@pytest.mark.parametrize("record", REPAIRED, ids=[r["repair"] for r in REPAIRED])
@pytest.mark.slow
def test_recorded_failing_replies_are_repaired_to_a_valid_submission(practice_home: Path,
                                                                     record: dict[str, Any]) -> None:
    """house: `X_test = test.drop(columns=['Id', 'SalePrice'])` raised KeyError (test has no target); mnist: a
    part with X and X_test from the image files but no model raised NameError, and an improvement that only
    wrote a grid search fitted on X_train (NameError); fine-food (react): `.agg(' '.join, axis=1)` after one
    column (ValueError: a Series has no axis 1). All now run to a valid file."""
    ran, verdict, program = _run(record["competition"], extract_code(record["content"])[1],
                                 truncated=record["finish_reason"] == "length", base=record.get("base", ""))
    assert int(ran["exit_code"]) == 0 and verdict == "valid", ran["stderr"][-300:]
    score = validation_score(ran["stdout"])
    assert score is not None and ((score < 0.3) if record["competition"] == "practice-house-prices" else (score > 0.8))
    part = part_of(program)
    if record["repair"] == "no model":
        assert part.endswith("model = LogisticRegression(max_iter=1000)  # the harness's default: the part defined "
                             "no model")
    elif record["repair"] == "improve without X":  # the parent's part, then the change, the search's fit gone
        assert part.startswith(record["base"]) and "model = RandomForestClassifier()" in part
        assert "X_train" not in part and "best_estimator_" not in part
    elif record["repair"] == "join of one column":  # react's reply, served with the stop string
        assert "X = train['review'].fillna('').astype(str)  #" in part and ".agg(" not in part
    else:
        assert "test.drop(columns=['Id', 'SalePrice'], errors='ignore')" in part


@pytest.mark.slow
def test_a_frame_of_free_text_and_a_search_fitted_in_the_part_give_a_valid_submission(practice_home: Path) -> None:
    """Real 1.5B parts of fine-food (the benchmark): X as a one-column DataFrame of review texts (get_dummies had
    no column left: "No objects to concatenate"), and a grid search fitted on the raw texts in the part."""
    frame = ("X = train.drop(columns=['id', 'product', 'great'])\nX_test = test.drop(columns=['id', 'product'])\n"
             "model = LogisticRegression(C=4, max_iter=1000)")
    search = ("from sklearn.model_selection import GridSearchCV\nX = train['review'].fillna('').astype(str)\n"
              "X_test = test['review'].fillna('').astype(str)\n"
              "model = LogisticRegression(C=4, max_iter=1000)\n"
              "grid_search = GridSearchCV(model, {'C': [0.1, 1, 10]}, cv=5, scoring='roc_auc')\n"
              "grid_search.fit(X, y)\nmodel = grid_search.best_estimator_")
    for part in (frame, search):
        ran, verdict, program = _run("practice-fine-food-reviews", part)
        assert int(ran["exit_code"]) == 0 and verdict == "valid", ran["stderr"][-300:]
        assert validation_score(ran["stdout"]) > 0.8  # type: ignore[operator]  # TF-IDF of the texts
    assert "grid_search.fit" not in part_of(program) and "best_estimator_" not in part_of(program)


@pytest.mark.slow
def test_image_files_are_named_by_the_fixed_lines_as_the_preview_shows_them(practice_home: Path) -> None:
    """mnist's real preview: train_files/test_files from the ids; a part that stacks them runs to a valid file;
    an outline copied with `X = ...` left open fails with a message naming what is left."""
    ran, verdict, program = _run("practice-mnist-digits", "X = np.stack([load_image(f) for f in train_files])\n"
                                 "X_test = np.stack([load_image(f) for f in test_files])\n"
                                 "model = LogisticRegression(max_iter=200)")
    assert int(ran["exit_code"]) == 0 and verdict == "valid", ran["stderr"][-300:]
    assert "train_files = './data/train/' + train['id'] + '.png'" in program
    assert "test_files = './data/test/' + sub['id'] + '.png'" in program
    ran, verdict, _ = _run("practice-mnist-digits", "X = np.stack([load_image(f) for f in train_files])\n"
                           "X_test = ...  # the features of the test items\nmodel = ...")
    assert int(ran["exit_code"]) != 0 and "your part left ['X_test', 'model'] as ..." in ran["stderr"]
    sub = {"header": ["id", "has_cactus"], "id_column": "id", "targets": ["has_cactus"],
           "sample": "sample_submission.csv"}
    with_extension = ("./data/train/: folder of 17500 files, e.g. 0004be2cfeaba1c0361d39e2b000257b.jpg, a.jpg\n"
                      "./data/train.csv: 17500 rows, 2 columns: id (text), has_cactus (number)\n"
                      "   row: 0004be2cfeaba1c0361d39e2b000257b.jpg, 1\n"
                      "./data/test/: folder of 4000 files, e.g. 000940378805c44108d287872b2f04ce.jpg")
    template = program_template(sub, "auc", "image", with_extension)
    assert template is not None and "train_files = './data/train/' + train['id']  #" in template.head
    assert "test_files = './data/test/' + sub['id']  #" in template.head  # the ids already end in .jpg
    other_ids = with_extension.replace("columns: id (text)", "columns: name (text)")  # the files' ids unknown
    template = program_template(sub, "auc", "image", other_ids)
    assert template is not None and "train_files" not in template.head


def test_x_made_from_test_reads_train_and_x_test_made_from_train_reads_test() -> None:
    """The real 1.5B part of house-prices seed 1 (four nodes in a row): `X = test.drop(columns=['Id'])`."""
    template = program_template(*(_TEMPLATE_INPUTS["practice-house-prices"]))
    assert template is not None
    part = "X = test.drop(columns=['Id'])  # test\nX_test = test.drop(columns=['Id'])\nmodel = Ridge()"
    assert template.cleaned(part) == ("X = train.drop(columns=['Id'])  # test\n"
                                      "X_test = test.drop(columns=['Id'], errors='ignore')\nmodel = Ridge()")
    assert template.cleaned("X = test\nX_test = vectorizer.transform(train['review'])\nmodel = Ridge()") == (
        "X = train\nX_test = vectorizer.transform(test['review'])\nmodel = Ridge()")
    both = "X = pd.concat([train, test])[:n]\nX_test = test\nmodel = Ridge()"  # reads both: as it is
    assert template.cleaned(both) == both
    sizes = ("full = pd.concat([train.drop(columns=['SalePrice']), test])\nX = full[:len(train)]\n"
             "X_test = full[len(train):]\nmodel = Ridge()")  # train's size is not train's rows
    assert template.cleaned(sizes) == sizes
    grows = "X = pd.concat([X, test[cols]])\nX_test = test\nmodel = Ridge()"  # X reads itself: as it is
    assert template.cleaned(grows) == grows


def test_a_change_that_leaves_out_names_runs_after_the_part_it_changes() -> None:
    template = program_template(*(_TEMPLATE_INPUTS["practice-house-prices"]))
    assert template is not None
    base = "X = train.drop(columns=['Id'])\nX_test = test.drop(columns=['Id'], errors='ignore')\nmodel = Ridge()"
    features = "X = train.drop(columns=['Id'])\nX_test = test.drop(columns=['Id'], errors='ignore')"
    # the line it changes goes (so the same change sent twice gives the same program)
    changed = template.cleaned("model = Ridge(alpha=3)", base=base)
    assert changed == f"{features}\nmodel = Ridge(alpha=3)" == template.cleaned("model = Ridge(alpha=3)", base=changed)
    assert template.cleaned("X = X.fillna(0)\nX_test = X_test.fillna(0)", base=base) == (
        f"{base}\nX = X.fillna(0)\nX_test = X_test.fillna(0)")  # a change that reads what it changes: base stays
    # a base line stays when later base lines read it, when its value calls a method, or when the part reads it
    fitted = ("vec = TfidfVectorizer()\nX = vec.fit_transform(train['t'])\nX_test = vec.transform(test['t'])\n"
              "model = Ridge()")
    assert template.cleaned("vec = TfidfVectorizer(min_df=2)\nmodel = Ridge(alpha=3)", base=fitted) == (
        "vec = TfidfVectorizer()\nX = vec.fit_transform(train['t'])\nX_test = vec.transform(test['t'])\n"
        "vec = TfidfVectorizer(min_df=2)\nmodel = Ridge(alpha=3)")
    popped = "y = train.pop('SalePrice')\nX = train\nX_test = test\nmodel = Ridge()"
    assert template.cleaned("y = np.log1p(train['LotArea'])\nX = 1\nX_test = 2", base=popped).startswith(
        "y = train.pop('SalePrice')\nmodel = Ridge()\n")
    assert template.cleaned("X /= 2\nX_test /= 2", base=base) == f"{base}\nX /= 2\nX_test /= 2"
    search = ("model = Ridge()\nsearch = GridSearchCV(model, {'alpha': [1, 3]})\nsearch.fit(X_train, y_train)\n"
              "model = search.best_estimator_")  # the search fitted on the split goes, and what it found
    assert template.cleaned(search, base=base) == (f"{base}\nmodel = Ridge()\n"  # the part reads model: it stays
                                                   "search = GridSearchCV(model, {'alpha': [1, 3]})")
    assert template.cleaned("print(1)", base=base) == "print(1)"  # no name of the part at all: not a change
    half = "X = train[['LotArea']]\nmodel = Ridge()"  # new X without its X_test: the parent's would not match
    assert template.cleaned(half, base=base) == half


def test_the_cleaning_keeps_a_line_of_several_statements_once_and_ends_drops_with_a_trailing_comma() -> None:
    template = program_template(*(_TEMPLATE_INPUTS["practice-house-prices"]))
    assert template is not None
    part = ("X = train.drop(columns=['Id', 'SalePrice']); X_test = test.drop(\n    columns=['Id', 'SalePrice'],  # é\n)"
            "\nmodel = Ridge(); model.fit(X_train, y_train)")
    cleaned = template.cleaned(part)
    assert cleaned == ("X = train.drop(columns=['Id', 'SalePrice']); X_test = test.drop(\n"
                       "    columns=['Id', 'SalePrice'], errors='ignore',  # é\n)\nmodel = Ridge()")
    compile(cleaned, "<part>", "exec")
    generator = "X = train\nX_test = test.drop(c for c in ['Id'])\nmodel = Ridge()"  # no room for errors=
    assert template.cleaned(generator) == generator


_TEMPLATE_INPUTS = {
    "practice-house-prices": ({"header": ["Id", "SalePrice"], "id_column": "Id", "targets": ["SalePrice"],
                               "sample": "sample_submission.csv"}, "rmsle", "tabular",
                              "./data/train.csv: 1164 rows, 81 columns: Id (number), SalePrice (number)\n"
                              "./data/test.csv: 292 rows"),
    "practice-fine-food-reviews": ({"header": ["id", "great"], "id_column": "id", "targets": ["great"],
                                    "sample": "sample_submission.csv"}, "auc", "text",
                                   "./data/train.csv: 4000 rows, 4 columns: id (text), review (text), great (number)\n"
                                   "./data/test.csv: 1000 rows"),
}
