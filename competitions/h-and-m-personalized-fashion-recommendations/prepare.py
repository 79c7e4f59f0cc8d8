"""The last days of transactions become the test period, as MLE-bench makes it: every transaction dated on
or after (latest date - 7 days) -- eight calendar days -- goes to the answers, the rest stays in
``transactions_train.csv``. The answers list, per customer who bought in that period (sorted by
customer_id), the article ids bought, space-separated in raw order with repeats kept. Transactions are read
as MLE-bench reads them (types inferred, so ``article_id`` is an integer and loses its leading zero) and
streamed in chunks (the raw file has about 32 million rows). ``articles.csv``, ``customers.csv``,
``images/`` and Kaggle's ``sample_submission.csv`` (every customer) are published unchanged."""

from __future__ import annotations

import pandas as pd

from mle_env.prepare.chunked import DEFAULT_CHUNK_ROWS, partition_csv
from mle_env.prepare.helpers import PrepareContext, copy_files, read_csv, write_csv

TEST_DAYS = 7  # MLE-bench's window: dates >= latest - 7 days, so 8 calendar days


def prepare(ctx: PrepareContext) -> None:
    transactions = ctx.raw_file("transactions_train.csv")
    with read_csv(transactions, usecols=["t_dat"], chunksize=DEFAULT_CHUNK_ROWS) as reader:
        latest = max(pd.to_datetime(chunk["t_dat"]).max() for chunk in reader)
    cutoff = latest - pd.Timedelta(days=TEST_DAYS)
    test_rows = ctx.scratch / "test_transactions.csv"
    partition_csv(transactions, [ctx.public / "transactions_train.csv", test_rows],
                  lambda chunk: (pd.to_datetime(chunk["t_dat"]) >= cutoff).astype(int).to_numpy())
    test = read_csv(test_rows, usecols=["customer_id", "article_id"])
    answers = (test.groupby("customer_id")["article_id"].apply(lambda ids: " ".join(ids.astype(str)))
               .reset_index().rename(columns={"article_id": "prediction"}))
    write_csv(answers, ctx.private / "answers.csv")
    test_rows.unlink()
    copy_files(["articles.csv", "customers.csv", "sample_submission.csv", "images"], ctx.raw, ctx.public,
               ctx.may_link(ctx.raw))
