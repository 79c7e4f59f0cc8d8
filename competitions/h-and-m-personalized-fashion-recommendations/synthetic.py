"""Synthetic raw data for h-and-m-personalized-fashion-recommendations (see mle_env.competition.synthetic)."""

from pathlib import Path

import numpy as np
import pandas as pd

from mle_env.competition.synthetic import column_ids, hex_ids, image_bytes, write_csv

PUBLIC = frozenset({"articles.csv", "customers.csv", "images", "sample_submission.csv", "transactions_train.csv"})
PRIVATE = frozenset({"answers.csv"})


def generate(raw: Path) -> None:
    rng = np.random.default_rng(37)
    articles = [f"0{code}{k:03d}" for code in rng.choice(np.arange(108775, 959000), 12, replace=False)
                for k in (1, 2)]
    customers = hex_ids(rng, 30, 64)
    n = 400
    days = pd.date_range("2020-08-25", "2020-09-22").strftime("%Y-%m-%d")
    transactions = pd.DataFrame({
        "t_dat": np.sort(rng.choice(days, n)), "customer_id": rng.choice(customers[:26], n),
        "article_id": rng.choice(articles, n), "price": rng.choice([0.0508474576271186, 0.0304915254237288,
                                                                     0.0152372881355932, 0.0220338983050847], n),
        "sales_channel_id": rng.choice([1, 2], n)})
    write_csv(transactions, raw / "transactions_train.csv")
    write_csv(pd.DataFrame({"article_id": articles, "product_code": [a[:7] for a in articles],
                            "prod_name": [f"Strap top {a[-3:]}" for a in articles], "product_type_no": 253,
                            "product_type_name": "Vest top", "colour_group_code": rng.integers(1, 90, len(articles)),
                            "detail_desc": "Jersey top with narrow shoulder straps."}), raw / "articles.csv")
    write_csv(pd.DataFrame({"customer_id": customers, "FN": rng.choice([1.0, np.nan], 30),
                            "Active": rng.choice([1.0, np.nan], 30), "club_member_status": "ACTIVE",
                            "fashion_news_frequency": rng.choice(["NONE", "Regularly"], 30),
                            "age": rng.integers(18, 80, 30), "postal_code": hex_ids(rng, 30, 64)}),
              raw / "customers.csv")
    write_csv(pd.DataFrame({"customer_id": customers, "prediction": " ".join(articles[:12])}),
              raw / "sample_submission.csv")
    for k, article in enumerate(articles[:-2]):  # Kaggle has no image for a few articles
        folder = raw / "images" / article[:3]
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"{article}.jpg").write_bytes(image_bytes("JPEG", seed=k))


def ids_from_answers(answers: pd.DataFrame) -> list[str]:
    return column_ids(answers, "customer_id")


def expected_test_ids(raw: Path) -> list[str]:
    """Customers with a purchase on or after the latest date minus 7 days, sorted."""
    transactions = pd.read_csv(raw / "transactions_train.csv", dtype=str)
    dates = pd.to_datetime(transactions["t_dat"])
    return sorted(set(transactions.loc[dates >= dates.max() - pd.Timedelta(days=7), "customer_id"]))


def perfect_submission(answers: pd.DataFrame) -> pd.DataFrame:
    """Each customer's purchases once each (MAP@12 gives a repeated article no credit)."""
    unique = answers["prediction"].map(lambda cell: " ".join(dict.fromkeys(cell.split(" "))))
    return answers[["customer_id"]].assign(prediction=unique)
