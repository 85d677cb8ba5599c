"""The labels every table and figure carries: where it was measured and by which editor.

An offline (rule-based) run must never pass for an LLM result, and a number without its
machine cannot be compared with another; figures say both in a caption line.
"""

from __future__ import annotations

import collections
import functools
import hashlib
import os
import pathlib
import platform
import types
from typing import Any, Mapping

__all__ = [
    "caption",
    "cpu_fields",
    "cpu_label",
    "editor_label",
    "fingerprint",
    "machine_fingerprint",
    "machine_label",
    "measured_on",
    "machines_label",
    "package_versions",
]

NOT_INSTALLED = "not installed"


def package_versions(names: tuple[str, ...]) -> dict[str, str]:
    """{distribution: installed version, or 'not installed'} for `names`, in that order: the
    code a figure (or a stored result) was computed with."""
    from importlib import metadata

    found = {}
    for name in names:
        try:
            found[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            found[name] = NOT_INSTALLED
    return found


def machine_label() -> str:
    """'host (x86_64, 2 CPUs: AMD EPYC, AVX-512; machine 1a2b3c4d5e6f)': the machine this
    process runs on, its CPU model where the system names it, and its `machine_fingerprint`
    (imports no jax). Two machines with the same host name, core count and CPU model can
    train the same seed to other figures (results/same-seed-machines): the fingerprint tells
    them apart."""
    cpu = cpu_label()
    return (
        f"{platform.node() or 'unknown'} ({platform.machine()}, {os.cpu_count()} CPUs"
        + (f": {cpu}" if cpu else "")
        + f"; machine {machine_fingerprint()})"
    )


_MACHINE_ID_FILES = ("/etc/machine-id", "/var/lib/dbus/machine-id")
_BOOT_ID_FILE = "/proc/sys/kernel/random/boot_id"


def _first_line(paths: tuple[str, ...]) -> str:
    for path in paths:
        try:
            text = pathlib.Path(path).read_text(encoding="utf-8", errors="replace").strip()
        except OSError:
            continue
        if text:
            return text
    return ""


def fingerprint(machine_id: str, boot_id: str, host: str) -> str:
    """12 hex digits of sha256 over the machine id, the boot id and the host name (the raw
    ids never leave the machine). Any of them differing gives another fingerprint."""
    return hashlib.sha256(f"{machine_id}\n{boot_id}\n{host}".encode("utf-8")).hexdigest()[:12]


@functools.cache
def machine_fingerprint() -> str:
    """This machine's fingerprint, stable for the life of its boot: `fingerprint` of
    /etc/machine-id (else /var/lib/dbus/machine-id), Linux's boot id and the host name.
    The boot id is in it because VMs cloned from one image share /etc/machine-id: with it two
    such VMs never read as one machine; a machine that reboots reads as another (never two
    machines as one). Where neither id exists, the network card's address (uuid.getnode)
    stands in."""
    machine_id, boot_id = _first_line(_MACHINE_ID_FILES), _first_line((_BOOT_ID_FILE,))
    if not machine_id and not boot_id:
        import uuid

        machine_id = f"node {uuid.getnode():012x}"
    return fingerprint(machine_id, boot_id, platform.node())


def cpu_label(cpuinfo: str | None = None) -> str:
    """'AMD EPYC, AVX-512': the CPU model and whether it has AVX-512 (which XLA's CPU code
    generation uses), from Linux's /proc/cpuinfo (or `cpuinfo`); else Python's
    `platform.processor()`; '' when neither names it."""
    fields = cpu_fields() if cpuinfo is None else _first_processor(cpuinfo)
    model = fields.get("model name") or platform.processor()
    if not model or model == platform.machine():  # some systems answer the architecture
        return ""
    return model + (", AVX-512" if "avx512f" in fields.get("flags", "").split() else "")


@functools.cache
def cpu_fields() -> Mapping[str, str]:
    """This machine's first processor in /proc/cpuinfo ('model name', 'flags', ...), read once
    per process (a label is taken per evaluation); {} where there is no such file."""
    try:
        cpuinfo = pathlib.Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace")
    except OSError:
        cpuinfo = ""
    return types.MappingProxyType(_first_processor(cpuinfo))  # cached: read-only


def _first_processor(cpuinfo: str) -> dict[str, str]:
    fields: dict[str, str] = {}
    for line in cpuinfo.splitlines():
        key, _, value = line.partition(":")
        fields.setdefault(key.strip(), value.strip())
    return fields


def measured_on() -> str:
    """'host (x86_64, 2 CPUs); JAX cpu x1': `machine_label()` and the JAX devices this process
    computes on (imports jax: call it where a measurement is taken, e.g. in a job's worker)."""
    try:
        import jax

        kinds = collections.Counter(d.device_kind for d in jax.devices())
        devices = ", ".join(f"{k} x{n}" for k, n in sorted(kinds.items()))
    except Exception:  # noqa: BLE001 - a label only; no backend is still a place
        devices = "no JAX backend"
    return f"{machine_label()}; JAX {devices}"


def machines_label(recorded: Any) -> str:
    """One label for measurements taken on the machines `recorded` (None: not recorded),
    e.g. 'a (x86_64, 2 CPUs); JAX cpu x1 (12 jobs) | not recorded (3 jobs)'."""
    counts = collections.Counter(m or "not recorded" for m in recorded)
    if not counts:
        return "no jobs yet"
    if len(counts) == 1:
        return next(iter(counts))
    return " | ".join(f"{m} ({n} jobs)" for m, n in sorted(counts.items()))


def editor_label(kinds: Any) -> str:
    """What proposed the programs, from editor kind(s) ('offline', 'llm', 'command')."""
    kinds = sorted({str(k) for k in ([kinds] if isinstance(kinds, str) else kinds or ["?"])})
    if kinds == ["offline"]:
        return "offline rule-based editor (NOT an LLM)"
    return " + ".join("LLM editor" if k == "llm" else f"{k} editor" for k in kinds)


def caption(fig: Any, text: str) -> None:
    """Writes `text` as a small caption line along the bottom of a matplotlib figure (leave
    about 6% of the height free below the axes)."""
    fig.text(0.5, 0.008, text, ha="center", va="bottom", fontsize=6.5, color="0.3", wrap=True)
