"""The classification families: seeds pass the check, bad candidates fail it, evaluation is
deterministic, and cached datasets without a cache fail with a one-line error naming the path."""

import pytest

from spark_jax import families
from spark_jax.plugins import classify as classify_family
from spark_jax.plugins.classify import data as classify_data

FAMILY = classify_family.FAMILY


def _seed(name):
    return FAMILY.seed_programs()[name].read_text()


def test_the_family_is_registered_behind_the_boundary():
    assert families.get("classify") is FAMILY
    assert isinstance(FAMILY, families.TaskFamily)
    assert set(FAMILY.seed_programs()) == {"lr", "mlp", "cnn", "gru"}


@pytest.mark.parametrize("benchmark", ["breast_cancer", "mnist1d"])
def test_seed_programs_are_feasible(benchmark):
    for name in ("lr", "mlp", "cnn", "gru"):
        assert FAMILY.check(_seed(name), benchmark, "tiny") is None, name


def test_a_wrong_shape_candidate_is_rejected():
    bad = _seed("mlp").replace("return self.out(h)  # [B, C]", "return h  # [B, H]")
    assert "logits shape" in FAMILY.check(bad, "breast_cancer", "tiny")


def test_a_non_finite_candidate_is_rejected():
    bad = _seed("mlp").replace("return self.out(h)  # [B, C]", "return self.out(h) / 0.0")
    assert FAMILY.check(bad, "mnist1d", "tiny") == "logits are not finite"


@pytest.mark.parametrize("benchmark", ["breast_cancer", "mnist1d"])
def test_evaluation_is_deterministic_for_a_fixed_seed(benchmark):
    a = FAMILY.evaluate(_seed("mlp"), benchmark, "tiny", seed=3)
    b = FAMILY.evaluate(_seed("mlp"), benchmark, "tiny", seed=3)
    assert a.metrics == b.metrics and a.score == b.score
    assert 0.0 <= a.metrics["accuracy"] <= 1.0 and a.macs > 0 and a.params > 0  # test part


def test_the_split_record_names_its_seed_and_sizes():
    record = FAMILY.data_record("breast_cancer", "tiny")
    assert record["split_seed"] == classify_data.SPLIT_SEED
    assert record["n_train"] + record["n_val"] + record["n_test"] == 200
    assert record["n_val"] == 32 and record["classes"] == 2 and "stratified" in record["val_split"]


def _rows(x):
    return {row.tobytes() for row in x}


@pytest.mark.parametrize("benchmark", ["breast_cancer", "mnist1d"])
def test_the_validation_split_is_stratified_and_disjoint(benchmark):
    import numpy as np

    split = classify_data.load(benchmark, "tiny")
    train, val, test = _rows(split.x_train), _rows(split.x_val), _rows(split.x_test)
    assert len(val) == len(split.x_val) > 0  # distinct examples
    assert not (val & train) and not (val & test) and not (train & test)
    # Stratified: every class's share of the validation part is its share of the train part
    # (to within one example per class).
    classes = np.arange(split.num_classes)
    in_train = np.array([(split.y_train == c).sum() for c in classes]) / len(split.y_train)
    in_val = np.array([(split.y_val == c).sum() for c in classes])
    assert np.all(np.abs(in_val - in_train * len(split.y_val)) <= 1.0)
    assert set(np.unique(split.y_val)) == set(np.unique(split.y_train))


def test_scoring_the_validation_part_never_reads_the_test_part():
    """A split whose test part is poisoned (NaN features): the validation score is unaffected,
    and only a test-part evaluation sees the poison."""
    import dataclasses

    import numpy as np

    clean = classify_data.load("breast_cancer", "tiny")
    poisoned = dataclasses.replace(clean, x_test=np.full_like(clean.x_test, np.nan))
    mlp = _seed("mlp")
    a = classify_family.evaluate(mlp, clean, "tiny", 0, "val")
    b = classify_family.evaluate(mlp, poisoned, "tiny", 0, "val")
    assert a.metrics == b.metrics and set(a.metrics) == {"val_accuracy", "val_loss"}
    assert a.score == a.metrics["val_accuracy"] and np.isfinite(a.metrics["val_loss"])
    test = classify_family.evaluate(mlp, poisoned, "tiny", 0, "test")
    assert set(test.metrics) == {"accuracy", "loss"} and np.isnan(test.metrics["loss"])
    with pytest.raises(ValueError, match="unknown split part 'train'"):
        clean.part("train")


@pytest.mark.parametrize(
    "benchmark,path", [("news20", "scikit_learn_data"), ("mice_protein", "mice_protein_40966")]
)
def test_an_uncached_dataset_names_the_cache_path(tmp_path, benchmark, path):
    with pytest.raises(classify_data.DataError, match=path):
        classify_data.load(benchmark, "tiny", tmp_path)


@pytest.mark.parametrize(
    "benchmark,url",
    [("news20", "ndownloader.figshare.com"), ("mice_protein", "api.openml.org/d/40966")],
)
def test_a_failed_first_download_names_the_directory_and_the_url(
    tmp_path, monkeypatch, benchmark, url
):
    import socket

    def offline(host, *args, **kwargs):
        raise socket.gaierror(-2, f"Name or service not known: {host}")

    monkeypatch.delenv(classify_data.OFFLINE_ENV, raising=False)
    monkeypatch.setattr(socket, "getaddrinfo", offline)  # scikit-learn's fetcher, no network
    with pytest.raises(classify_data.DataError) as info:
        classify_data.load(benchmark, "tiny", tmp_path)
    message = str(info.value)
    assert "\n" not in message and str(tmp_path) in message and url in message
    assert "failed" in message and not (tmp_path / "openml" / "mice_protein_40966.csv").exists()


def test_mice_protein_splits_by_mouse_and_imputes_from_the_training_part(tmp_path):
    import numpy as np

    # OpenML 40966's layout: 15 measurements per mouse (MouseID 'MOUSE_REPLICATE'), one class
    # per mouse, a categorical column (dropped) and missing values. f1 is the mouse's number,
    # so each part's distinct f1 values name its mice (one affine standardization for all).
    rng = np.random.default_rng(0)
    rows = ["MouseID,f1,f2,Genotype,class"]
    for mouse in range(16):
        for rep in range(1, 16):
            gap = (mouse + rep) % 7 == 0
            f2 = "" if gap else f"{rng.normal(loc=mouse):.3f}"
            rows.append(f"{300 + mouse}_{rep},{mouse},{f2},Control,c-{'CS' if mouse % 2 else 'SC'}")
    (tmp_path / "openml").mkdir()
    (tmp_path / "openml" / "mice_protein_40966.csv").write_text("\n".join(rows) + "\n")
    split = classify_data.load("mice_protein", "tiny", tmp_path)  # tiny: at most 200 rows
    parts = (split.x_train, split.x_val, split.x_test)
    assert split.x_train.shape[1] == 2 and split.num_classes == 2
    assert sum(len(p) for p in parts) <= 200 and all(len(p) and len(p) % 15 == 0 for p in parts)
    mice = [set(np.round(p[:, 0], 4).tolist()) for p in parts]
    assert not (mice[0] & mice[1] or mice[0] & mice[2] or mice[1] & mice[2])  # no shared mouse
    # Imputed with the training part's mean, then standardized with it: exactly 0, in every
    # part (a mean over all rows would leave the held-out parts' imputed values off 0).
    # Each mouse misses 2 or 3 of its 15 f2 values.
    for part in parts:
        imputed = int(np.sum(np.abs(part[:, 1]) < 1e-5))
        assert 2 * len(part) // 15 <= imputed <= 3 * len(part) // 15
    assert all(np.isfinite(p).all() for p in parts)
    assert "split by mouse" in split.record["source"]
    (tmp_path / "openml" / "mice_protein_40966.csv").write_text("f1,class\n1,a\n")
    classify_data._load.cache_clear()
    with pytest.raises(classify_data.DataError, match="no 'MouseID' column"):
        classify_data.load("mice_protein", "smoke", tmp_path)
