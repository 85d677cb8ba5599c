"""The classification families: seeds pass the check, bad candidates fail it, evaluation is
deterministic, and cached datasets without a cache fail with a one-line error naming the path."""

import pytest

from spark_jax import families
from spark_jax.evaluation import classify_data, classify_family

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


def test_mice_protein_reads_a_cached_fixture_and_imputes_missing_values(tmp_path):
    import numpy as np

    rng = np.random.default_rng(0)
    rows = ["MouseID,f1,f2,class"]
    for i in range(40):
        f2 = "" if i % 7 == 0 else f"{rng.normal():.3f}"
        rows.append(f"m{i},{rng.normal():.3f},{f2},c-{'CS' if i % 2 else 'SC'}-m")
    (tmp_path / "openml").mkdir()
    (tmp_path / "openml" / "mice_protein_40966.csv").write_text("\n".join(rows) + "\n")
    split = classify_data.load("mice_protein", "tiny", tmp_path)
    assert split.x_train.shape[1] == 2 and split.num_classes == 2
    assert np.isfinite(split.x_train).all() and np.isfinite(split.x_test).all()
    assert np.isfinite(split.x_val).all() and len(split.x_val) == 7  # 20% of 32, stratified
