"""Reference population for practice-mnist-digits: 20 pixel models x 6 training-set sizes = 120 entries.

Models see the 784 pixel values scaled to [0, 1]: from a majority vote to nearest neighbours, linear
models, tree ensembles, small multi-layer perceptrons and RBF support-vector machines; training on
10 % to 100 % of the images spreads their strength.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.decomposition import PCA
from sklearn.ensemble import ExtraTreesClassifier, RandomForestClassifier
from sklearn.linear_model import LogisticRegression, RidgeClassifier
from sklearn.naive_bayes import GaussianNB
from sklearn.neighbors import KNeighborsClassifier, NearestCentroid
from sklearn.neural_network import MLPClassifier
from sklearn.pipeline import make_pipeline
from sklearn.svm import SVC
from sklearn.tree import DecisionTreeClassifier

from mle_env.reference_solution import ReferenceSolution, subsample

FRACTIONS = (0.1, 0.2, 0.35, 0.5, 0.75, 1.0)

SETUPS = {
    "majority": None,
    "centroid": lambda: NearestCentroid(),
    "gaussian-nb": lambda: GaussianNB(),
    "tree-depth8": lambda: DecisionTreeClassifier(max_depth=8, random_state=0),
    "tree-full": lambda: DecisionTreeClassifier(random_state=0),
    "ridge": lambda: RidgeClassifier(alpha=10.0),
    "logreg-c0.01": lambda: LogisticRegression(C=0.01, max_iter=300),
    "logreg-c1": lambda: LogisticRegression(C=1.0, max_iter=300),
    "knn-1": lambda: KNeighborsClassifier(1),
    "knn-5": lambda: KNeighborsClassifier(5),
    "knn-5-pca40": lambda: make_pipeline(PCA(40, random_state=0), KNeighborsClassifier(5)),
    "forest-50": lambda: RandomForestClassifier(50, random_state=0, n_jobs=2),
    "forest-300": lambda: RandomForestClassifier(300, random_state=0, n_jobs=2),
    "extra-trees-300": lambda: ExtraTreesClassifier(300, random_state=0, n_jobs=2),
    "mlp-32": lambda: MLPClassifier((32,), max_iter=200, random_state=0),
    "mlp-256": lambda: MLPClassifier((256,), max_iter=200, random_state=0),
    "svc-rbf-c1": lambda: SVC(C=1.0),
    "svc-rbf-c5": lambda: SVC(C=5.0),
    "svc-pca50-c10": lambda: make_pipeline(PCA(50, whiten=False, random_state=0), SVC(C=10.0)),
    "svc-poly": lambda: SVC(kernel="poly", degree=3, C=1.0),
}


def _pixels(folder: Path, ids: pd.Series) -> np.ndarray:
    from PIL import Image

    return np.stack([np.asarray(Image.open(folder / f"{i}.png"), dtype=np.float32).ravel() / 255.0 for i in ids])


def _solution(name: str, fraction: float) -> ReferenceSolution:
    def predict(public: Path) -> pd.DataFrame:
        train = subsample(pd.read_csv(public / "train.csv", dtype={"id": str}), fraction)
        test = pd.read_csv(public / "sample_submission.csv", dtype={"id": str})
        if SETUPS[name] is None:
            guess = np.full(len(test), train["label"].mode().iloc[0])
        else:
            model = SETUPS[name]()
            model.fit(_pixels(public / "train", train["id"]), train["label"])
            guess = model.predict(_pixels(public / "test", test["id"]))
        return pd.DataFrame({"id": test["id"], "label": guess.astype(int)})
    return ReferenceSolution(f"{name}@{int(fraction * 100)}%", predict)


def solutions() -> list[ReferenceSolution]:
    return [_solution(name, fraction) for name in SETUPS for fraction in FRACTIONS]
