"""Synthetic raw data for movie-review-sentiment-analysis-kernels-only (see mle_env.competition.synthetic).

Kaggle ships tab-separated tables without quoting, each zipped alone: ``train.tsv.zip`` (PhraseId,
SentenceId, Phrase, Sentiment), ``test.tsv.zip`` (the same without Sentiment) and ``sampleSubmission.csv``.
Each sentence is listed whole, then as some of its sub-phrases, with Penn Treebank tokens (``-LRB-``,
`````, ``n't``) and commas, which the comma-separated answers must quote.
"""

from pathlib import Path

import numpy as np
import pandas as pd

from mle_env.competition.synthetic import column_ids, held_out, write_csv, write_zip

PUBLIC = frozenset({"sampleSubmission.csv", "test.tsv.zip", "train.tsv.zip"})
PRIVATE = frozenset({"answers.csv"})
SENTENCES = [
    "A series of escapades demonstrating the adage that what is good for the goose",
    "This quiet , introspective and entertaining independent is worth seeking .",
    "Even fans of Ismail Merchant 's work will have a hard time sitting through this one .",
    "The movie is n't painful , just -LRB- mostly -RRB- boring .",
    "`` Frailty '' offers chills much like those that you get when sitting around a campfire .",
    "It 's a lovely film with lovely performances by Buy and Accorsi .",
    "Nothing here seems as funny as it did in Analyze This , not even Joe Viterelli .",
    "A positively thrilling combination of ethnography and all the intrigue , betrayal , deceit and murder .",
    "Aggressive self-glorification and a manipulative whitewash .",
    "Could the whole plot be any more predictable ?",
    "The acting is amateurish and the script is worse .",
    "One of the best films of the year , and a triumph of craft .",
]


def _tsv(frame: pd.DataFrame) -> str:
    """Kaggle's layout: tab-separated, no quoting, LF line ends."""
    lines = ["\t".join(frame.columns)] + ["\t".join(str(v) for v in row) for row in frame.itertuples(index=False)]
    return "\n".join(lines) + "\n"


def _phrases(sentence: str, rng: np.random.Generator) -> list[str]:
    """The sentence, then a few of its distinct spans, as the parse lists them."""
    words = sentence.split(" ")
    spans = [sentence]
    for _ in range(int(rng.integers(3, 7))):
        start = int(rng.integers(0, len(words)))
        spans.append(" ".join(words[start:start + int(rng.integers(1, 4))]))
    return list(dict.fromkeys(spans))


def generate(raw: Path) -> None:
    rng = np.random.default_rng(73)
    rows, phrase_id = [], 1
    for sentence_id, sentence in enumerate(SENTENCES[:9], start=1):
        for phrase in _phrases(sentence, rng):
            rows.append((phrase_id, sentence_id, phrase, int(rng.choice(5, p=[0.1, 0.25, 0.35, 0.2, 0.1]))))
            phrase_id += 1
    train = pd.DataFrame(rows, columns=["PhraseId", "SentenceId", "Phrase", "Sentiment"])
    test_rows = [(phrase_id + k, 100 + s, p) for k, (s, p) in enumerate(
        (s, p) for s, sentence in enumerate(SENTENCES[9:]) for p in _phrases(sentence, rng))]
    test = pd.DataFrame(test_rows, columns=["PhraseId", "SentenceId", "Phrase"])
    write_zip(raw / "train.tsv.zip", {"train.tsv": _tsv(train)})
    write_zip(raw / "test.tsv.zip", {"test.tsv": _tsv(test)})
    write_csv(test[["PhraseId"]].assign(Sentiment=2), raw / "sampleSubmission.csv")


def ids_from_answers(answers: pd.DataFrame) -> list[str]:
    return column_ids(answers, "PhraseId")


def expected_test_ids(raw: Path) -> list[str]:
    """train.tsv's phrases split 70/30 row by row (no grouping by sentence)."""
    return [str(v) for v in held_out(pd.read_csv(raw / "train.tsv.zip", sep="\t"), 0.3)["PhraseId"]]
