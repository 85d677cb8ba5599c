"""The machine label names the CPU and a machine fingerprint: two hosts with one name, core
count and CPU model can train the same seed to other figures (results/same-seed-machines), so
a record must tell them apart."""

from __future__ import annotations

import re

from spark_jax.util import labels

CPUINFO = """processor\t: 0
model name\t: AMD EPYC 9R14 96-Core Processor
flags\t\t: fpu sse avx avx2 avx512f avx512bw
processor\t: 1
model name\t: AMD EPYC 9R14 96-Core Processor
flags\t\t: fpu sse avx avx2 avx512f avx512bw
"""


def test_cpu_label_names_the_model_and_avx512():
    assert labels.cpu_label(CPUINFO) == "AMD EPYC 9R14 96-Core Processor, AVX-512"
    without = CPUINFO.replace(" avx512f avx512bw", "")
    assert labels.cpu_label(without) == "AMD EPYC 9R14 96-Core Processor"


def test_machine_label_carries_this_machines_cpu_label_and_fingerprint():
    label, cpu, mark = labels.machine_label(), labels.cpu_label(), labels.machine_fingerprint()
    assert re.fullmatch(r"[0-9a-f]{12}", mark)
    assert label.endswith((f": {cpu}" if cpu else " CPUs") + f"; machine {mark})"), label
    assert labels.measured_on().startswith(label + "; JAX ")


def test_fingerprint_tells_apart_what_core_count_and_cpu_model_cannot():
    """Two VMs with one host name, core count and CPU model (results/same-seed-machines): the
    same image's machine id, other boots, or other machine ids give other fingerprints; the
    same machine in the same boot gives the same one."""
    one = labels.fingerprint("0123abcd" * 4, "8da1aca0-0c53", "vm")
    assert one == labels.fingerprint("0123abcd" * 4, "8da1aca0-0c53", "vm")
    assert one != labels.fingerprint("0123abcd" * 4, "5e6f7a8b-1d2e", "vm")  # a clone, rebooted
    assert one != labels.fingerprint("fedc9876" * 4, "8da1aca0-0c53", "vm")
    assert one != labels.fingerprint("0123abcd" * 4, "8da1aca0-0c53", "vm2")
    assert "0123abcd" not in one  # the raw id is not written anywhere
    # This machine's, from its own files: the same for the life of the process.
    assert labels.machine_fingerprint() == labels.machine_fingerprint()


def test_machine_fingerprint_reads_the_machine_and_boot_ids(tmp_path, monkeypatch):
    machine_id, boot_id = tmp_path / "machine-id", tmp_path / "boot_id"
    machine_id.write_text("0123abcd\n", encoding="utf-8")
    boot_id.write_text("8da1aca0\n", encoding="utf-8")
    monkeypatch.setattr(labels, "_MACHINE_ID_FILES", (str(tmp_path / "absent"), str(machine_id)))
    monkeypatch.setattr(labels, "_BOOT_ID_FILE", str(boot_id))
    monkeypatch.setattr(labels.platform, "node", lambda: "vm")
    labels.machine_fingerprint.cache_clear()
    try:
        assert labels.machine_fingerprint() == labels.fingerprint("0123abcd", "8da1aca0", "vm")
        boot_id.write_text("5e6f7a8b\n", encoding="utf-8")  # another boot of the same image
        labels.machine_fingerprint.cache_clear()
        assert labels.machine_fingerprint() == labels.fingerprint("0123abcd", "5e6f7a8b", "vm")
    finally:
        labels.machine_fingerprint.cache_clear()


def test_a_resumed_search_records_each_parts_machine(tmp_path):
    """`search --resume` notes the machine (with its fingerprint) of every resumed part in
    run_meta['resumed']; the first part's is run_meta['machine']."""
    import pathlib
    import shutil

    from spark_jax.config import search as search_config
    from spark_jax.search import startup

    root = pathlib.Path(__file__).resolve().parents[1]
    run = tmp_path / "run"
    shutil.copytree(root / "results" / "controls-offline" / "data" / "spark" / "seed-0", run)
    (run / "lock").unlink(missing_ok=True)
    cfg = search_config.load(run / "config.yaml")
    for _ in range(2):
        lock, db = startup.open_run(cfg, run, True, ["spark-jax", "search", "--resume"])
        parts = db.get_meta("resumed")
        db.close()
        lock.release()
    assert [p["machine"] for p in parts] == [labels.machine_label()] * 2
    assert labels.machine_fingerprint() in parts[0]["machine"]
