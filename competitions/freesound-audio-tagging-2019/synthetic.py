"""Synthetic raw data for freesound-audio-tagging-2019 (see mle_env.competition.synthetic), with the
post-competition labels archive from Zenodo placed in the raw folder (so nothing is downloaded)."""

import zipfile
from pathlib import Path

import numpy as np
import pandas as pd

from mle_env.competition.synthetic import column_ids, csv_text, hex_ids, wav_bytes, write_csv, write_zip

PUBLIC = frozenset({"sample_submission.csv", "test.zip", "train_curated.csv", "train_curated.zip", "train_noisy.csv",
                    "train_noisy.zip"})
PRIVATE = frozenset({"test.csv"})
#: the 80 AudioSet categories, in the sample submission's order
CLASSES = [
    "Accelerating_and_revving_and_vroom", "Accordion", "Acoustic_guitar", "Applause", "Bark", "Bass_drum",
    "Bass_guitar", "Bathtub_(filling_or_washing)", "Bicycle_bell", "Burping_and_eructation", "Bus", "Buzz",
    "Car_passing_by", "Cheering", "Chewing_and_mastication", "Child_speech_and_kid_speaking", "Chink_and_clink",
    "Chirp_and_tweet", "Church_bell", "Clapping", "Computer_keyboard", "Crackle", "Cricket", "Crowd",
    "Cupboard_open_or_close", "Cutlery_and_silverware", "Dishes_and_pots_and_pans", "Drawer_open_or_close", "Drip",
    "Electric_guitar", "Fart", "Female_singing", "Female_speech_and_woman_speaking", "Fill_(with_liquid)",
    "Finger_snapping", "Frying_(food)", "Gasp", "Glockenspiel", "Gong", "Gurgling", "Harmonica", "Hi-hat", "Hiss",
    "Keys_jangling", "Knock", "Male_singing", "Male_speech_and_man_speaking", "Marimba_and_xylophone",
    "Mechanical_fan", "Meow", "Microwave_oven", "Motorcycle", "Printer", "Purr", "Race_car_and_auto_racing",
    "Raindrop", "Run", "Scissors", "Screaming", "Shatter", "Sigh", "Sink_(filling_or_washing)", "Skateboard", "Slam",
    "Sneeze", "Squeak", "Stream", "Strum", "Tap", "Tick-tock", "Toilet_flush", "Traffic_noise_and_roadway_noise",
    "Trickle_and_dribble", "Walk_and_footsteps", "Water_tap_and_faucet", "Waves_and_surf", "Whispering", "Writing",
    "Yell", "Zipper_(clothing)",
]


def _tags(rng: np.random.Generator, n: int) -> list[str]:
    return [",".join(rng.choice(CLASSES[:12], int(rng.integers(1, 4)), replace=False)) for _ in range(n)]


def generate(raw: Path) -> None:
    rng = np.random.default_rng(2019)
    names = [f"{h}.wav" for h in hex_ids(rng, 50, 8)]
    curated, noisy, private, public = names[:14], names[14:30], names[30:44], names[44:]
    for part, clips in (("train_curated", curated), ("train_noisy", noisy)):
        write_csv(pd.DataFrame({"fname": clips, "labels": _tags(rng, len(clips))}), raw / f"{part}.csv")
        write_zip(raw / f"{part}.zip", {name: wav_bytes(0.01) for name in clips})
    write_zip(raw / "test.zip", {name: wav_bytes(0.01) for name in private})
    order = list(rng.permutation(private))  # the sample lists the clips in another order than the labels file
    write_csv(pd.DataFrame({"fname": order, **dict.fromkeys(CLASSES, 0)}), raw / "sample_submission.csv")
    labels = pd.DataFrame({"fname": private + public, "labels": _tags(rng, len(private) + len(public)),
                           "usage": ["Private"] * len(private) + ["Public"] * len(public),
                           "freesound_id": rng.integers(10**5, 10**6, len(private) + len(public)),
                           "license": "CC-BY"})
    write_zip(raw / "FSDKaggle2019.meta.zip", {"FSDKaggle2019.meta/test_post_competition.csv": csv_text(labels),
                                               "FSDKaggle2019.meta/vocabulary.csv": "\n".join(CLASSES) + "\n"})


def ids_from_answers(answers: pd.DataFrame) -> list[str]:
    return column_ids(answers, "fname")


def expected_test_ids(raw: Path) -> list[str]:
    """The clips marked Private in the Zenodo labels, in that file's order."""
    with zipfile.ZipFile(raw / "FSDKaggle2019.meta.zip") as zf:
        with zf.open("FSDKaggle2019.meta/test_post_competition.csv") as f:
            labels = pd.read_csv(f, dtype=str)
    return list(labels.loc[labels["usage"] == "Private", "fname"])
