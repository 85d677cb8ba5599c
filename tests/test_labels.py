"""The machine label names the CPU: two hosts with one name and core count can train the same
seed to other figures (results/same-seed-machines), so a record must tell them apart."""

from __future__ import annotations

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


def test_machine_label_carries_this_machines_cpu_label():
    label, cpu = labels.machine_label(), labels.cpu_label()
    assert label.endswith(f": {cpu})" if cpu else " CPUs)"), label
    assert labels.measured_on().startswith(label + "; JAX ")
