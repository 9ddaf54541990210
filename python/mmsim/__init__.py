"""mmsim from Python: a deterministic simulator of Linux memory management.

The package is a thin layer over mmsim's Rust crates (the native module
``mmsim._mmsim``): a run here builds its scenario exactly as ``mmsim run`` builds
it from the same settings, and its JSON is ``mmsim run --json``'s, byte for byte
(but the CLI's host-dependent ``host_heap_peak_bytes``).

>>> import mmsim
>>> r = mmsim.run("zipf-file", policy="mglru", memory="256M")   # doctest: +SKIP
>>> r.vmstat["workingset_refault_file"]                          # doctest: +SKIP
>>> r.timeseries                                                 # doctest: +SKIP

* :func:`run` runs a scenario (an embedded name, a file, TOML text or a dict) or
  a trace, with overrides; returns a :class:`Result` whose counters, memory
  cgroup statistics, PSI and time series are pandas objects.
* :func:`compare` compares configurations as ``mmsim compare`` does; returns the
  table as a DataFrame.
* :func:`mmsim.trace.info` summarises a trace in one pass, with the plain-LRU
  miss-ratio curve.
* :func:`sweep` runs a grid of points on all local cores or on a Ray cluster,
  appending each finished point to Parquet and resuming where a killed sweep
  stopped.

Settings: keyword arguments named like ``mmsim run``'s flags (``memory``,
``memcg_max``, ``swap``, ``swap_size``, ``swappiness``, ``cpus``, ``seed``,
``policy``, ``cost_variant``, ``mglru_version``, ``min_ttl_ms``,
``lru_gen_enabled``, ``schedule`` (``"round-robin"`` or ``"fair"``), ``sample``
and ``sample_block`` (a SHARDS-sampled run); for a trace ``format``, ``target``
(``--as``), ``limit`` and ``keys`` (``"dense"`` or ``"offset"``); ``host_memory``,
a size or ``"max"``: a run whose estimate does not
fit in what this process can have is refused before it starts, as on the
command line) are applied as those flags are; any other keyword is a ``[machine]``
key written as ``mmsim run --set KEY=VALUE`` writes it (``page_cluster=0``;
``swap__device="zram"`` or ``set={"swap.device": "zram"}`` for dotted keys).

Errors are :class:`ScenarioError` (a scenario, setting or machine value is
wrong) and :class:`TraceError` (a trace cannot be read), both
:class:`MmsimError`, carrying mmsim's own messages.
"""

from __future__ import annotations

import io
import json
import os
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple, Union

from . import _mmsim
from ._mmsim import MmsimError, ScenarioError, TraceError, SCHEMA_VERSION
from ._result import Result

__all__ = [
    "run",
    "compare",
    "scenarios",
    "scenario_toml",
    "cli_args",
    "sweep",
    "read_sweep",
    "Result",
    "MmsimError",
    "ScenarioError",
    "TraceError",
    "SCHEMA_VERSION",
    "trace",
]

__version__ = "0.1.0"

ScenarioLike = Union[None, str, "os.PathLike[str]", Mapping[str, Any]]

_FLAGS = frozenset(_mmsim.run_flags())


def _fmt(value: Any) -> str:
    """A setting's value as the CLI would take it on its command line."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, os.PathLike):
        return os.fspath(value)
    return str(value)


def _base(scenario: ScenarioLike) -> Tuple[str, Optional[str]]:
    """The native module's (kind, text) of a scenario argument."""
    if scenario is None:
        return "default", None
    if isinstance(scenario, Mapping):
        return "json", json.dumps(scenario)
    if isinstance(scenario, os.PathLike):
        return "named", os.fspath(scenario)
    if isinstance(scenario, str):
        # An existing file is a file; else TOML text has a newline, a table header or
        # an assignment, which an embedded scenario's name has not.
        if os.path.exists(scenario):
            return "named", scenario
        if "\n" in scenario or "=" in scenario or scenario.lstrip().startswith("["):
            return "toml", scenario
        return "named", scenario
    raise ScenarioError(
        f"scenario: expected a name, a path, TOML text or a dict, not {type(scenario).__name__}"
    )


def _split(
    overrides: Mapping[str, Any], set: Optional[Mapping[str, Any]] = None
) -> Tuple[List[Tuple[str, str]], List[Tuple[str, str]]]:
    """Keyword arguments as (run flags, ``--set`` machine keys), values formatted."""
    options: List[Tuple[str, str]] = []
    sets: List[Tuple[str, str]] = []
    for key, value in overrides.items():
        if value is None:
            continue
        if key in ("as_", "as"):
            key = "target"
        if key in _FLAGS:
            options.append((key, _fmt(value)))
        else:
            sets.append((key.replace("__", "."), _fmt(value)))
    for key, value in (set or {}).items():
        sets.append((key, _fmt(value)))
    return options, sets


def run(
    scenario: ScenarioLike = None,
    *,
    trace: Union[None, str, "os.PathLike[str]"] = None,
    set: Optional[Mapping[str, Any]] = None,
    **overrides: Any,
) -> Result:
    """Run a scenario (or a trace) and return its :class:`Result`.

    ``scenario`` is an embedded scenario's name (see :func:`scenarios`), a
    scenario file (a path that exists), TOML text (a string with a newline, an
    ``=`` or a ``[table]``), or a dict of the TOML's tables; ``None`` is the
    default scenario, or with ``trace`` just the trace on a large machine. The
    keyword arguments are the settings described in the module's docstring.
    The run releases the GIL; Ctrl-C stops it with ``KeyboardInterrupt``.

    Raises :class:`ScenarioError` or :class:`TraceError` with mmsim's message.
    """
    label = overrides.pop("_trace_label", None)
    if trace is not None:
        overrides["trace"] = trace
    options, sets = _split(overrides, set)
    kind, text = _base(scenario)
    raw, metrics, notes = _mmsim.run(kind, text, options, sets, label)
    return Result(raw, dict(metrics), list(notes))


def scenario_toml(
    scenario: ScenarioLike = None,
    *,
    trace: Union[None, str, "os.PathLike[str]"] = None,
    set: Optional[Mapping[str, Any]] = None,
    **overrides: Any,
) -> str:
    """The effective scenario of :func:`run` with these arguments, as TOML
    (what ``mmsim run --print-scenario`` prints), without running it."""
    if trace is not None:
        overrides["trace"] = trace
    options, sets = _split(overrides, set)
    kind, text = _base(scenario)
    return _mmsim.scenario_toml(kind, text, options, sets)


def cli_args(
    scenario: ScenarioLike = None,
    *,
    trace: Union[None, str, "os.PathLike[str]"] = None,
    set: Optional[Mapping[str, Any]] = None,
    **overrides: Any,
) -> List[str]:
    """The ``mmsim run`` arguments of the same run (``["run", "zipf-file",
    "--policy", "cost", ...]``); for a scenario given as a dict or TOML text
    there is no command line and :class:`ScenarioError` is raised."""
    if trace is not None:
        overrides["trace"] = trace
    options, sets = _split(overrides, set)
    kind, text = _base(scenario)
    if kind in ("toml", "json"):
        raise ScenarioError("a scenario given as TOML text or a dict has no command line")
    args = ["run"] + ([text] if text is not None else [])
    for key, value in options:
        flag = "--as" if key == "target" else "--" + key.replace("_", "-")
        args += [flag, value]
    for key, value in sets:
        args += ["--set", f"{key}={value}"]
    return args


def scenarios() -> Dict[str, str]:
    """The embedded scenarios: name -> description."""
    return dict(_mmsim.embedded_scenarios())


def compare(
    scenario: ScenarioLike = None,
    *,
    policy: Union[None, str, Sequence[str]] = None,
    cost_variant: Union[None, str, Sequence[str]] = None,
    set: Optional[Mapping[str, Sequence[Any]]] = None,
    repeat: int = 1,
    trace: Union[None, str, "os.PathLike[str]"] = None,
    report: bool = False,
    **overrides: Any,
):
    """Compare configurations as ``mmsim compare --json`` does.

    The axes are ``policy`` and ``cost_variant`` (lists of values) and ``set``
    (``{"swappiness": [60, 115]}``); the configurations are their product,
    the first axis varying slowest, the first configuration the baseline.
    Each runs ``repeat`` times with seeds seed, seed+1, .... Other keyword
    arguments fix run settings for every configuration (as ``mmsim run``'s flags).

    Returns the compare table as a DataFrame: ``mmsim compare --csv``'s
    rows (one per metric and config: ``value`` the mean over the runs,
    ``runs``, ``min``, ``max``, ``stddev``, ``change_pct`` of the means
    against the baseline), written by the same exporter. With ``report=True``, returns ``(table, report)``
    where ``report`` is the whole JSON report as a dict.
    """
    import pandas as pd

    def axis(values: Union[None, str, Sequence[Any]]) -> Optional[str]:
        if values is None:
            return None
        if isinstance(values, str):
            return values
        return ",".join(_fmt(v) for v in values)

    if trace is not None:
        overrides["trace"] = trace
    options, sets = _split(overrides)
    if sets:
        raise ScenarioError(
            f"{sets[0][0]}: a [machine] key is compared through set={{...: [values]}}; "
            "fixed settings are the run flags"
        )
    set_axes = [f"{k}={axis(v if not isinstance(v, str) else [v])}" for k, v in (set or {}).items()]
    kind, text = _base(scenario)
    raw, csv_text = _mmsim.compare(
        kind, text, options, axis(policy), axis(cost_variant), set_axes, int(repeat)
    )
    table = pd.read_csv(io.StringIO(csv_text))
    if report:
        return table, json.loads(raw)
    return table


from . import trace  # noqa: E402  (submodule, after the names it uses)
from .sweep import sweep, read_sweep  # noqa: E402
