"""Type stubs of the native module ``mmsim._mmsim`` (crates/mmsim-py)."""

from typing import List, Optional, Sequence, Tuple

SCHEMA_VERSION: int

class MmsimError(Exception):
    """Base class of mmsim's errors; the message is mmsim's own."""

class ScenarioError(MmsimError):
    """A scenario, a setting or a machine value is wrong; the message names the file,
    line or field."""

class TraceError(MmsimError):
    """A trace cannot be opened or read; the message names the file and the record."""

def run(
    kind: str,
    scenario: Optional[str],
    options: Sequence[Tuple[str, str]],
    sets: Sequence[Tuple[str, str]],
    trace_label: Optional[str] = None,
) -> Tuple[str, List[Tuple[str, Optional[float]]], List[str]]:
    """Runs a scenario with the GIL released: (``mmsim run --json``'s text, the
    compared metrics, the notes). ``kind``: default | named | toml | json."""

def scenario_toml(
    kind: str,
    scenario: Optional[str],
    options: Sequence[Tuple[str, str]],
    sets: Sequence[Tuple[str, str]],
) -> str:
    """The effective scenario as TOML (``mmsim run --print-scenario``)."""

def host_memory_estimate(
    kind: str,
    scenario: Optional[str],
    options: Sequence[Tuple[str, str]],
    sets: Sequence[Tuple[str, str]],
) -> int:
    """The host memory a run needs at most, bytes."""

def compare(
    kind: str,
    scenario: Optional[str],
    options: Sequence[Tuple[str, str]],
    policy: Optional[str],
    cost_variant: Optional[str],
    set: Sequence[str],
    repeat: int,
) -> Tuple[str, str]:
    """``mmsim compare``: (the JSON report, the CSV table)."""

def trace_info(
    path: str,
    format: str = "auto",
    sizes: Optional[Sequence[int]] = None,
    limit: Optional[int] = None,
    csv_columns: Optional[str] = None,
    sample: Optional[float] = None,
    sample_size: Optional[int] = None,
) -> str:
    """``mmsim trace info --json``'s report (without schema_version)."""

def embedded_scenarios() -> List[Tuple[str, str]]:
    """(name, description) of every embedded scenario."""

def metric_infos() -> List[Tuple[str, str]]:
    """(name, about) of every compared metric."""

def run_flags() -> List[str]:
    """The keyword arguments applied as ``mmsim run`` flags (``host_memory``: the
    host memory a run may use, a size or ``"max"``; default what this process can
    have, detected before each run)."""
