"""Synthetic raw data for smartphone-decimeter-2022 (see mle_env.competition.synthetic)."""

from pathlib import Path

import numpy as np
import pandas as pd

from mle_env.competition.synthetic import held_out, write_csv

PUBLIC = frozenset({"metadata", "sample_submission.csv", "test", "train"})
PRIVATE = frozenset({"test.csv"})
DRIVES = ["2020-05-15-US-MTV-1", "2020-05-21-US-MTV-2", "2020-5-21-US-MTV-1", "2020-06-04-US-MTV-1",
          "2020-07-08-US-MTV-1", "2020-08-03-US-MTV-1", "2020-12-10-US-SJC-1", "2021-01-04-US-RWC-1",
          "2021-04-15-US-MTV-1", "2021-07-19-US-MTV-1", "2021-12-08-US-LAX-2", "2022-01-11-US-MTV-1"]
PHONES = ["GooglePixel4", "GooglePixel5", "SamsungGalaxyS20Ultra"]


def _trip(rng: np.random.Generator, folder: Path, n: int, labelled: bool) -> None:
    times = 1589570000000 + 1000 * np.arange(n)
    lat, lng = 37.4 + np.cumsum(rng.normal(0, 1e-4, n)), -122.1 + np.cumsum(rng.normal(0, 1e-4, n))
    write_csv(pd.DataFrame({"MessageType": "Raw", "utcTimeMillis": times, "Svid": rng.integers(1, 32, n),
                            "Cn0DbHz": rng.uniform(20, 45, n).round(2), "ConstellationType": 1,
                            "WlsPositionXEcefMeters": rng.uniform(-2.7e6, -2.6e6, n).round(3)}),
              folder / "device_gnss.csv")
    write_csv(pd.DataFrame({"MessageType": "UncalAccel", "utcTimeMillis": times, "MeasurementX": rng.normal(0, 1, n),
                            "MeasurementY": rng.normal(0, 1, n), "MeasurementZ": rng.normal(9.8, 1, n)}),
              folder / "device_imu.csv")
    (folder / "supplemental").mkdir()
    (folder / "supplemental" / "gnss_log.txt").write_text("# Version: v3.0.0.1 Platform: 11\n")
    (folder / "supplemental" / "span_log.nmea").write_text(
        "".join(f"$GPGGA,{t // 1000 % 86400:06d}.00,{a:.7f},N,{-o:.7f},W,4,12,0.9,10.0,M,-30.0,M,,*5C\n"
                for t, a, o in zip(times, lat, lng, strict=True)))
    if labelled:
        write_csv(pd.DataFrame({"MessageType": "Fix", "Provider": "GT", "LatitudeDegrees": lat,
                                "LongitudeDegrees": lng, "AltitudeMeters": rng.uniform(0, 30, n).round(3),
                                "SpeedMps": rng.uniform(0, 30, n).round(3), "AccuracyMeters": 0.1,
                                "BearingDegrees": rng.uniform(0, 360, n).round(2), "UnixTimeMillis": times}),
                  folder / "ground_truth.csv")


def generate(raw: Path) -> None:
    rng = np.random.default_rng(29)
    for part, drives in (("train", DRIVES), ("test", ["2022-04-25-US-OAK-1"])):
        for k, drive in enumerate(drives):
            for phone in PHONES[: 1 + k % 2]:
                (raw / part / drive / phone).mkdir(parents=True)
                _trip(rng, raw / part / drive / phone, int(rng.integers(6, 12)), part == "train")
    (raw / "metadata").mkdir()
    (raw / "metadata" / "raw_state_bit_map.json").write_text('{"0": "STATE_UNKNOWN"}\n')
    write_csv(pd.DataFrame({"ConstellationType": [1, 3], "ConstellationName": ["GPS", "GLONASS"]}),
              raw / "metadata" / "constellation_type_mapping.csv")
    test = raw / "test" / "2022-04-25-US-OAK-1" / PHONES[0]
    times = pd.read_csv(test / "device_gnss.csv")["utcTimeMillis"]
    write_csv(pd.DataFrame({"tripId": f"2022-04-25-US-OAK-1-{PHONES[0]}", "UnixTimeMillis": times,
                            "LatitudeDegrees": 37.9, "LongitudeDegrees": -122.3}), raw / "sample_submission.csv")


def ids_from_answers(answers: pd.DataFrame) -> list[str]:
    """Each answer row as '<tripId> <UnixTimeMillis>'."""
    return [f"{t} {u}" for t, u in zip(answers["tripId"], answers["UnixTimeMillis"], strict=True)]


def expected_test_ids(raw: Path) -> list[str]:
    """Distinct dates (month and day zero-padded), sorted, split 10 %; the test drives' trips in sorted order."""
    def date(drive: str) -> str:
        year, month, day = drive.split("-")[:3]
        return f"{year}-{int(month):02d}-{int(day):02d}"

    drives = sorted(p.name for p in (raw / "train").iterdir())
    chosen = set(held_out(sorted({date(d) for d in drives}), 0.1))
    ids = []
    for drive in (d for d in drives if date(d) in chosen):
        for phone in sorted(p.name for p in (raw / "train" / drive).iterdir()):
            times = pd.read_csv(raw / "train" / drive / phone / "ground_truth.csv")["UnixTimeMillis"]
            ids += [f"{drive}-{phone} {t}" for t in times]
    return ids
