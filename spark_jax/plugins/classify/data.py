"""Data for the classification families: fixed splits, standardized float32 features.

Three disjoint parts: train (what a candidate trains on), validation (what the search selects
on: `VAL_FRACTION` of the training data, carved out stratified by class with `SPLIT_SEED`)
and test (the benchmark's test part, scored only for the final programs of a search that
selects on validation). Standardization uses the train part's statistics only. Every loader
returns a `Split` whose `record` (dataset, sizes, split seed, source) is stored in
the run database. MNIST-1D is generated offline by the `mnist1d` package; Breast Cancer
Wisconsin is scikit-learn's bundled copy; 20News and Mice Protein are downloaded on first use
into the data dir by scikit-learn's fetchers (`fetch_20newsgroups`, `fetch_openml`) and read
from there after; with no network a missing cache is a one-line error naming the directory and
the URL.
"""

from __future__ import annotations

import dataclasses
import functools
import os
import pathlib
from typing import Any

import numpy as np

__all__ = ["BENCHMARKS", "DataError", "Split", "load"]

BENCHMARKS = ("mnist1d", "breast_cancer", "news20", "mice_protein")
SPLIT_SEED = 0
TEST_FRACTION = 0.2
VAL_FRACTION = 0.2  # Of the training data, stratified: the search's selection split.
# Samples generated/kept per preset (None: the whole dataset).
_SIZES = {"tiny": 200, "smoke": None}


class DataError(ValueError):
    """A dataset is missing or malformed; the message names the path or key."""


@dataclasses.dataclass(frozen=True)
class Split:
    """Train, validation and test parts (disjoint); `record` describes them."""

    x_train: np.ndarray  # [N, F] float32
    y_train: np.ndarray  # [N] int32
    x_val: np.ndarray  # [V, F] float32
    y_val: np.ndarray  # [V] int32
    x_test: np.ndarray  # [M, F] float32
    y_test: np.ndarray  # [M] int32
    num_classes: int
    record: dict[str, Any]

    def part(self, name: str) -> tuple[np.ndarray, np.ndarray]:
        """(x, y) of the 'val' or 'test' part; ValueError naming the known parts."""
        if name == "val":
            return self.x_val, self.y_val
        if name == "test":
            return self.x_test, self.y_test
        raise ValueError(f"unknown split part {name!r}; known: val, test")


def _standardize(x_tr: np.ndarray, *others: np.ndarray) -> tuple[np.ndarray, ...]:
    """Every array standardized with the train part's per-feature mean and std."""
    mean = x_tr.mean(axis=0)
    std = x_tr.std(axis=0) + 1e-6
    return tuple(((x - mean) / std).astype(np.float32) for x in (x_tr, *others))


def _carve_val(name: str, x_tr: np.ndarray, y_tr: np.ndarray):
    """(x_train, y_train, x_val, y_val): `VAL_FRACTION` of the training data, stratified."""
    from sklearn.model_selection import train_test_split

    try:
        x_tr, x_val, y_tr, y_val = train_test_split(
            x_tr, y_tr, test_size=VAL_FRACTION, random_state=SPLIT_SEED, stratify=y_tr
        )
    except ValueError as e:  # a class with one training example cannot be stratified
        raise DataError(f"{name}: cannot carve a stratified validation split: {e}") from None
    return x_tr, np.asarray(y_tr), x_val, np.asarray(y_val)


def _split(name: str, x: np.ndarray, y: np.ndarray, preset: str, source: str) -> Split:
    from sklearn.model_selection import train_test_split

    limit = _SIZES[preset]
    if limit is not None and len(x) > limit:
        keep = np.random.default_rng(SPLIT_SEED).permutation(len(x))[:limit]
        x, y = x[keep], y[keep]
    x_tr, x_te, y_tr, y_te = train_test_split(
        x, y, test_size=TEST_FRACTION, random_state=SPLIT_SEED, stratify=y
    )
    x_tr, y_tr, x_val, y_val = _carve_val(name, np.asarray(x_tr, np.float64), np.asarray(y_tr))
    x_tr, x_val, x_te = _standardize(x_tr, x_val, np.asarray(x_te, np.float64))
    return _finish(name, (x_tr, y_tr), (x_val, y_val), (x_te, np.asarray(y_te)), preset, source)


def _finish(name, train, val, test, preset, source) -> Split:
    (x_tr, y_tr), (x_val, y_val), (x_te, y_te) = train, val, test
    classes = int(max(y_tr.max(), y_val.max(), y_te.max()) + 1)
    record = {
        "dataset": name,
        "preset": preset,
        "source": source,
        "split_seed": SPLIT_SEED,
        "n_train": len(x_tr),
        "n_val": len(x_val),
        "n_test": len(x_te),
        "val_split": f"stratified {VAL_FRACTION:g} of the training data (seed {SPLIT_SEED})",
        "features": int(x_tr.shape[1]),
        "classes": classes,
    }
    arrays = [(x.astype(np.float32), y.astype(np.int32)) for x, y in (train, val, test)]
    return Split(*(a for pair in arrays for a in pair), classes, record)


def _mnist1d(preset: str) -> Split:
    from mnist1d.data import get_dataset_args, make_dataset

    args = get_dataset_args()  # The paper's defaults: 5000 samples, 80/20, seed 42.
    if _SIZES[preset] is not None:
        args.num_samples = _SIZES[preset]
    d = make_dataset(args)
    x_tr, y_tr, x_val, y_val = _carve_val("mnist1d", d["x"].astype(np.float64), d["y"])
    x_tr, x_val, x_te = _standardize(x_tr, x_val, d["x_test"].astype(np.float64))
    source = f"mnist1d.make_dataset(seed={args.seed}, num_samples={args.num_samples})"
    test = (x_te, np.asarray(d["y_test"]))
    return _finish("mnist1d", (x_tr, y_tr), (x_val, y_val), test, preset, source)


def _breast_cancer(preset: str) -> Split:
    from sklearn.datasets import load_breast_cancer

    x, y = load_breast_cancer(return_X_y=True)
    return _split("breast_cancer", x, y, preset, "sklearn.datasets.load_breast_cancer")


def _news20(preset: str, data_dir: pathlib.Path) -> Split:
    from sklearn.datasets import fetch_20newsgroups
    from sklearn.feature_extraction.text import TfidfVectorizer

    home = data_dir / "scikit_learn_data"
    url = "https://ndownloader.figshare.com/files/5975967"  # scikit-learn's 20news-bydate

    def fetch(subset: str):
        return fetch_20newsgroups(data_home=str(home), subset=subset, download_if_missing=True)

    tr, te = _download("20News", home, url, lambda: (fetch("train"), fetch("test")))
    vec = TfidfVectorizer(max_features=2000, stop_words="english")
    x_tr = vec.fit_transform(tr.data).toarray()
    x_te = vec.transform(te.data).toarray()
    limit = _SIZES[preset]
    if limit is not None:
        x_tr, y_tr, x_te, y_te = (
            x_tr[:limit],
            tr.target[:limit],
            x_te[: limit // 4],
            te.target[: limit // 4],
        )
    else:
        y_tr, y_te = tr.target, te.target
    x_tr, y_tr, x_val, y_val = _carve_val("news20", x_tr, np.asarray(y_tr))
    source = f"{home} + TF-IDF(2000)"
    test = (x_te, np.asarray(y_te))
    return _finish("news20", (x_tr, y_tr), (x_val, y_val), test, preset, source)


def _mice_protein(preset: str, data_dir: pathlib.Path) -> Split:
    """OpenML 40966: 15 measurements per mouse (`MouseID` 'MOUSE_REPLICATE'), so every part is
    split by mouse (no mouse in two parts, stratified by class: each mouse has one class), and
    missing values are imputed with the training part's per-feature means only."""
    path = data_dir / "openml" / "mice_protein_40966.csv"
    import pandas as pd

    if not path.is_file():  # first use: OpenML's copy, kept as the CSV read from then on
        from sklearn.datasets import fetch_openml

        url = "https://api.openml.org/d/40966"
        home = data_dir / "openml"

        def fetch():
            return fetch_openml(data_id=40966, data_home=str(home), as_frame=True, n_retries=1)

        _download("Mice Protein", path, url, fetch).frame.to_csv(path, index=False)
    frame = pd.read_csv(path)
    for column in ("class", "MouseID"):
        if column not in frame.columns:
            raise DataError(f"{path}: no {column!r} column")
    y = frame["class"].astype("category").cat.codes.to_numpy()
    mice = frame["MouseID"].astype(str).str.rsplit("_", n=1).str[0].to_numpy()  # [N]
    x = frame.drop(columns=["class"]).select_dtypes(include="number").to_numpy(np.float64)
    limit = _SIZES[preset]
    if limit is not None and len(x) > limit:  # whole mice, in a seeded order, up to `limit` rows
        order = np.random.default_rng(SPLIT_SEED).permutation(np.unique(mice))
        counts = np.cumsum([np.sum(mice == m) for m in order])
        kept = np.isin(mice, order[: max(1, int(np.searchsorted(counts, limit, "right")))])
        x, y, mice = x[kept], y[kept], mice[kept]
    train, test = _group_parts("mice_protein", y, mice, TEST_FRACTION, np.arange(len(y)))
    train, val = _group_parts("mice_protein", y[train], mice[train], VAL_FRACTION, train)
    mean = np.nanmean(x[train], axis=0)  # [F]: the training part's, as standardization
    x = np.where(np.isnan(x), np.nan_to_num(mean), x)
    x_tr, x_val, x_te = _standardize(x[train], x[val], x[test])
    source = f"{path} (split by mouse; imputed with training-part means)"
    parts = ((x_tr, y[train]), (x_val, y[val]), (x_te, y[test]))
    return _finish("mice_protein", *parts, preset, source)


def _group_parts(name: str, y: np.ndarray, groups: np.ndarray, fraction: float, index):
    """(rest, held out): `index` cut so that about `fraction` is held out, whole groups only,
    stratified by class (StratifiedGroupKFold's first fold, seeded)."""
    from sklearn.model_selection import StratifiedGroupKFold

    folds = StratifiedGroupKFold(round(1 / fraction), shuffle=True, random_state=SPLIT_SEED)
    try:
        rest, held = next(folds.split(np.zeros(len(y)), y, groups))
    except ValueError as e:  # fewer groups than folds
        raise DataError(f"{name}: cannot split by mouse: {e}") from None
    return index[rest], index[held]


def _download(what: str, cache: pathlib.Path, url: str, fetch):
    """`fetch()` (a scikit-learn fetcher that fills `cache` on first use) with a 60 s socket
    timeout; DataError naming the cache and the URL when it cannot (e.g. no network)."""
    import socket

    if os.environ.get(OFFLINE_ENV):
        raise DataError(f"{what} not cached: fill {cache} (downloads are off: ${OFFLINE_ENV})")
    cache.parent.mkdir(parents=True, exist_ok=True)
    previous = socket.getdefaulttimeout()
    socket.setdefaulttimeout(60.0)
    try:
        return fetch()
    except Exception as e:  # urllib's URLError, HTTP errors, a truncated archive
        reason = str(e).splitlines()[0] if str(e) else type(e).__name__
        raise DataError(
            f"{what} not cached: fill {cache} (download from {url} failed: {reason})"
        ) from None
    finally:
        socket.setdefaulttimeout(previous)


# Where the downloaded datasets (20News, Mice Protein) are cached when no directory is given.
DATA_DIR_ENV = "SPARK_JAX_DATA_DIR"
# Set (to anything) for no download attempt: a missing cache is then the error at once.
OFFLINE_ENV = "SPARK_JAX_OFFLINE"


def data_dir_default() -> pathlib.Path:
    """$SPARK_JAX_DATA_DIR, else ./data (relative to the working directory)."""
    return pathlib.Path(os.environ.get(DATA_DIR_ENV) or "data")


def load(benchmark: str, preset: str, data_dir: str | pathlib.Path | None = None) -> Split:
    """The fixed split of `benchmark` at `preset` (cached datasets under `data_dir`, default
    `data_dir_default()`); raises DataError naming the bad value.

    Built once per process and argument set (a search's start-up validates, sizes the sandbox
    check and records the split: one load); the arrays are read-only, as they are shared."""
    data_dir = data_dir_default() if data_dir is None else data_dir
    return _load(benchmark, preset, str(pathlib.Path(data_dir).resolve()))


@functools.lru_cache(maxsize=8)
def _load(benchmark: str, preset: str, data_dir: str) -> Split:
    split = _build(benchmark, preset, data_dir)
    for array in (
        split.x_train,
        split.y_train,
        split.x_val,
        split.y_val,
        split.x_test,
        split.y_test,
    ):
        array.setflags(write=False)
    return split


def _build(benchmark: str, preset: str, data_dir: str) -> Split:
    if preset not in _SIZES:
        raise DataError(f"unknown preset {preset!r}; known: {', '.join(_SIZES)}")
    if benchmark == "mnist1d":
        return _mnist1d(preset)
    if benchmark == "breast_cancer":
        return _breast_cancer(preset)
    if benchmark == "news20":
        return _news20(preset, pathlib.Path(data_dir))
    if benchmark == "mice_protein":
        return _mice_protein(preset, pathlib.Path(data_dir))
    raise DataError(f"unknown benchmark {benchmark!r}; known: {', '.join(BENCHMARKS)}")
