"""Synthetic raw data for text-normalization-challenge-english-language (see mle_env.competition.synthetic)."""

from mle_env.competition.synthetic import token_normalization

PUBLIC = frozenset({"en_sample_submission_2.csv.zip", "en_test_2.csv.zip", "en_train.csv.zip"})
PRIVATE = frozenset({"answers.csv", "sample_submission.csv"})
TOKENS = [("PLAIN", "Hello", "Hello"), ("PUNCT", ",", ","), ("DATE", "2010", "twenty ten"),
          ("CARDINAL", "12", "twelve"), ("LETTERS", "BBC", "b b c"), ("MEASURE", "5 kg", "five kilograms"),
          ("PLAIN", "NA", "NA"), ("PLAIN", "he said \"no\"", "he said \"no\"")]


generate, ids_from_answers, expected_test_ids = token_normalization("en", TOKENS, seed=20)
