"""The built wheel works on its own: installed (not editable) into a fresh virtual environment,
run from a directory outside the repository, it finds its shipped seed programs, prompts and
reference tables, checks a seed and runs a tiny search to its report.

No network: the wheel is built with the current environment's setuptools
(`--no-build-isolation`), and the fresh environment borrows the current one's third-party
packages through a `.pth` line naming the current site-packages. A directory added by a
`.pth` line does not get its own `.pth` files processed, so the repository's editable install
(a `.pth` finder) does not activate there: `spark_jax` comes from the wheel only.
"""

from __future__ import annotations

import os
import pathlib
import shutil
import site
import subprocess
import sys
import tarfile
import zipfile

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
ASSET_KINDS = ("processors", "prompts", "reference")
# What a source build needs; copied so the build's `build/` and `*.egg-info` never land in
# (or go stale in) the checkout.
SOURCE = ("pyproject.toml", "MANIFEST.in", "README.md", "spark_jax", "configs") + ASSET_KINDS
TINY_SEARCH = """\
task: bfs
preset: tiny
protocol: {train_steps: 4, eval_every: 2}
seed: 0
budget: 2
max_attempts: 2
editor: {kind: offline}
executor: {kind: local, num_workers: 1, in_flight: 1, timeout_s: 900}
feasibility: {timeout_s: 60}
"""


def _run(argv: list, cwd: pathlib.Path, timeout: float = 600) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    env["TF_CPP_MIN_LOG_LEVEL"] = "3"
    proc = subprocess.run(
        [str(a) for a in argv], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout
    )
    assert proc.returncode == 0, (
        f"{argv}: exit {proc.returncode}\n{proc.stdout[-2000:]}\n{proc.stderr[-4000:]}"
    )
    return proc


def _copy_source(dest: pathlib.Path) -> pathlib.Path:
    dest.mkdir()
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info")
    for name in SOURCE:
        src = ROOT / name
        if src.is_dir():
            shutil.copytree(src, dest / name, symlinks=True, ignore=ignore)
        else:
            shutil.copy2(src, dest / name)
    return dest


def _build_wheel(source: pathlib.Path, out: pathlib.Path) -> pathlib.Path:
    _run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "--no-index",
            "-q",
            "-w",
            out,
            source,
        ],
        cwd=out.parent,
    )
    (built,) = out.glob("spark_jax-*.whl")
    return built


def _shipped(kind: str) -> list[str]:
    root = ROOT / kind
    files = (p for p in root.rglob("*") if p.is_file() and "__pycache__" not in p.parts)
    return sorted(p.relative_to(root).as_posix() for p in files)


def _family_data() -> list[str]:
    """Each task family plug-in's seed programs and contract (paths under spark_jax/)."""
    root = ROOT / "spark_jax"
    files = [*root.glob("plugins/*/seeds/*.py"), *root.glob("plugins/*/*.md")]
    assert files, "no task family plug-in ships seeds"
    return sorted(p.relative_to(root).as_posix() for p in files)


def _assert_assets(names: set[str], prefix: str) -> None:
    for kind in ASSET_KINDS:
        for name in _shipped(kind):
            assert f"{prefix}spark_jax/assets/{kind}/{name}" in names, (kind, name)
    for name in _shipped("spark_jax/serve/static"):  # the browser view's script, styles, uPlot
        assert f"{prefix}spark_jax/serve/static/{name}" in names, name
    for name in _family_data():
        assert f"{prefix}spark_jax/{name}" in names, name


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> pathlib.Path:
    """The wheel built from a copy of the checkout."""
    tmp = tmp_path_factory.mktemp("build")
    return _build_wheel(_copy_source(tmp / "src"), tmp / "dist")


@pytest.fixture(scope="module")
def installed(wheel, tmp_path_factory) -> pathlib.Path:
    """A fresh venv with the wheel installed; returns the venv directory."""
    tmp = tmp_path_factory.mktemp("venv")
    venv = tmp / "venv"
    _run([sys.executable, "-m", "venv", "--without-pip", venv], cwd=tmp)
    python = venv / "bin" / "python"
    purelib = pathlib.Path(
        _run(
            [python, "-c", 'import sysconfig; print(sysconfig.get_paths()["purelib"])'], cwd=tmp
        ).stdout.strip()
    )
    borrowed = [p for p in site.getsitepackages() if os.path.isdir(p)]
    (purelib / "_borrowed_site_packages.pth").write_text("\n".join(borrowed) + "\n")
    # --ignore-installed: the borrowed site-packages lists the editable spark-jax as installed.
    _run(
        [
            python,
            "-m",
            "pip",
            "install",
            "--no-deps",
            "--no-index",
            "--ignore-installed",
            "-q",
            wheel,
        ],
        cwd=tmp,
    )
    return venv


def test_wheel_carries_assets(wheel):
    with zipfile.ZipFile(wheel) as zf:
        _assert_assets(set(zf.namelist()), "")


def test_sdist_carries_assets(tmp_path):
    """A wheel built from the sdist ships the assets too (MANIFEST.in grafts them)."""
    source = _copy_source(tmp_path / "src")
    (tmp_path / "sdist").mkdir()
    _run(
        [
            sys.executable,
            "-c",
            "import sys; from setuptools import build_meta; build_meta.build_sdist(sys.argv[1])",
            tmp_path / "sdist",
        ],
        cwd=source,
    )
    (sdist,) = (tmp_path / "sdist").glob("spark*.tar.gz")
    with tarfile.open(sdist) as tf:
        links = [m.name for m in tf.getmembers() if m.issym() or m.islnk()]
    assert links == []
    (tmp_path / "dist").mkdir()
    with zipfile.ZipFile(_build_wheel(sdist, tmp_path / "dist")) as zf:
        _assert_assets(set(zf.namelist()), "")


def test_installed_package_is_self_contained(installed, tmp_path):
    python = installed / "bin" / "python"
    out = _run(
        [
            python,
            "-c",
            "import spark_jax; from spark_jax.config import assets; "
            'print(spark_jax.__file__); print(assets.seed_program_path("mpnn")); '
            'print(assets.asset_dir("prompts"))',
        ],
        cwd=tmp_path,
    ).stdout.split()
    package, seed, prompts = (pathlib.Path(p) for p in out)
    assert package.is_relative_to(installed), package  # the wheel, not the editable checkout
    assert seed.is_relative_to(installed) and prompts.is_relative_to(installed)
    assets = package.parent / "assets"
    for kind in ASSET_KINDS:
        assert not (assets / kind).is_symlink()
        for name in _shipped(kind):
            path = assets / kind / name
            assert path.is_file() and not path.is_symlink(), path
            assert path.read_bytes() == (ROOT / kind / name).read_bytes(), path
    for name in _family_data():
        assert (package.parent / name).read_bytes() == (ROOT / "spark_jax" / name).read_bytes()

    spark_jax_cmd = installed / "bin" / "spark-jax"
    check = _run([spark_jax_cmd, "check", seed, "--preset", "tiny"], cwd=tmp_path)
    assert "feasible" in check.stdout

    config = tmp_path / "tiny.yaml"  # no seed_program: the shipped default seed
    config.write_text(TINY_SEARCH)
    run_dir = tmp_path / "run"
    _run(
        [spark_jax_cmd, "search", "--config", config, "--run-dir", run_dir, "--no-progress"],
        cwd=tmp_path,
    )
    assert (run_dir / "report.md").is_file() and (run_dir / "run.db").is_file()
