"""20 % of the recordings in the labelled cross-validation fold become the test set, as MLE-bench splits.

Only fold-0 (labelled) recordings are kept; ``DataFrame.sample(frac=0.2, random_state=0)`` of them are
marked fold 1 (test). Recording ids are renumbered 0, 1, ... in fold-file order, in every text file that
names them. Answers hold one row per (test recording, species): ``Id = rec_id * 100 + species``.
"""

from pathlib import Path

import pandas as pd

from mle_env.prepare.helpers import PrepareContext, copy_files, raw_folder, read_csv, write_csv

SPECIES = 19
SEGMENT_FILES = ("histogram_of_segments.txt", "segment_features.txt", "segment_rectangles.txt")
PER_RECORDING = ("filtered_spectrograms", "spectrograms", "supervised_segmentation")


def _lines(path: Path) -> list[tuple[int, str]]:
    """(rec_id, rest of the line) for each line after the header."""
    out = []
    for line in path.read_text().splitlines()[1:]:
        rec_id, _, rest = line.partition(",")
        out.append((int(rec_id), rest))
    return out


def _write_lines(path: Path, header: str, lines: list[str]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(f"{line}\n" for line in [header, *lines]))


def prepare(ctx: PrepareContext) -> None:
    root = raw_folder(ctx, "mlsp_contest_dataset")
    essential, supplemental = root / "essential_data", root / "supplemental_data"
    out_essential, out_supplemental = ctx.public / "essential_data", ctx.public / "supplemental_data"

    folds = read_csv(essential / "CVfolds_2.txt")
    folds = folds[folds["fold"] == 0].reset_index(drop=True)
    folds.loc[folds.sample(frac=0.2, random_state=0).index, "fold"] = 1
    new_id = {old: new for new, old in enumerate(folds["rec_id"])}
    folds["rec_id"] = folds.index
    write_csv(folds, out_essential / "CVfolds_2.txt")
    test_ids = list(folds.loc[folds["fold"] == 1, "rec_id"])
    in_test = set(test_ids)

    names = read_csv(essential / "rec_id2filename.txt")
    names = names[names["rec_id"].isin(new_id)].assign(rec_id=lambda f: f["rec_id"].map(new_id))
    write_csv(names, out_essential / "rec_id2filename.txt")

    labels = [(new_id[old], rest) for old, rest in _lines(essential / "rec_labels_test_hidden.txt") if old in new_id]
    public_lines = [f"{rec},?" if rec in in_test else (f"{rec},{rest}" if rest else f"{rec}") for rec, rest in labels]
    _write_lines(out_essential / "rec_labels_test_hidden.txt", "rec_id,[labels]", public_lines)
    present = {rec: {int(s) for s in rest.split(",") if s != ""} for rec, rest in labels if rec in in_test}
    answers = [(rec * 100 + s, int(s in species)) for rec, species in present.items() for s in range(SPECIES)]
    write_csv(pd.DataFrame(answers, columns=["Id", "Probability"]), ctx.private / "answers.csv")
    sample = pd.DataFrame({"Id": [rec * 100 + s for rec in test_ids for s in range(SPECIES)], "Probability": 0})
    write_csv(sample, ctx.public / "sample_submission.csv")

    link = ctx.may_link(root)
    files = list(names["filename"])
    copy_files(["species_list.txt"], essential, out_essential, link)
    copy_files([f"{f}.wav" for f in files], essential / "src_wavs", out_essential / "src_wavs", link)
    for folder in PER_RECORDING:
        copy_files([f"{f}.bmp" for f in files], supplemental / folder, out_supplemental / folder, link)
    examples = supplemental / "segmentation_examples"
    shown = [f"{f}.bmp" for f in files if (examples / f"{f}.bmp").is_file()]  # only some recordings have one
    copy_files(shown, examples, out_supplemental / "segmentation_examples", link)
    copy_files(["segment_clusters.bmp", "segment_mosaic.bmp"], supplemental, out_supplemental, link)
    for name in SEGMENT_FILES:  # MLE-bench writes the same header line into all three files
        kept = [f"{new_id[old]},{rest}" for old, rest in _lines(supplemental / name) if old in new_id]
        _write_lines(out_supplemental / name, "rec_id,[histogram of segment features]", kept)
