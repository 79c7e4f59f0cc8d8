"""Synthetic raw data for text-normalization-challenge-russian-language (see mle_env.competition.synthetic)."""

from mle_env.competition.synthetic import token_normalization

PUBLIC = frozenset({"ru_sample_submission_2.csv.zip", "ru_test_2.csv.zip", "ru_train.csv.zip"})
PRIVATE = frozenset({"answers.csv", "sample_submission.csv"})
TOKENS = [("PLAIN", "Привет", "Привет"), ("PUNCT", ".", "."),
          ("DATE", "1999 года", "тысяча девятьсот девяносто девятого года"),
          ("CARDINAL", "12", "двенадцать"), ("LETTERS", "ООН", "о о н"),
          ("PLAIN", "Moscow", "м_trans о_trans с_trans к_trans о_trans у_trans"),
          ("PLAIN", "NA", "NA")]


generate, ids_from_answers, expected_test_ids = token_normalization("ru", TOKENS, seed=21)
