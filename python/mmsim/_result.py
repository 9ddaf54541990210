"""The result of one run, as pandas objects over ``mmsim run --json``'s JSON."""

from __future__ import annotations

import json
from typing import Any, Dict, List, Optional


def _flat(prefix: str, value: Any, out: Dict[str, Any]) -> None:
    """Nested dicts as ``a_b_c`` keys (PSI's ``some.avg10`` -> ``psi_some_avg10``)."""
    if isinstance(value, dict):
        for k, v in value.items():
            _flat(f"{prefix}_{k}" if prefix else k, v, out)
    else:
        out[prefix] = value


class Result:
    """One run's result.

    Attributes
    ----------
    json : str
        The result exactly as ``mmsim run --json`` prints it (without the CLI's
        host-dependent ``host_heap_peak_bytes``).
    data : dict
        ``json`` parsed.
    notes : list of str
        What the overrides did besides the obvious (as ``mmsim run`` prints them).

    The tables are built on first use: :attr:`vmstat`, :attr:`metrics`,
    :attr:`memcg`, :attr:`psi`, :attr:`timeseries`, :attr:`workloads`,
    :attr:`traces`. Top-level JSON fields are attributes too
    (``r.miss_ratio``, ``r.runtime_s``, ``r.policy``) and items (``r["seed"]``).
    """

    def __init__(self, json_text: str, metrics: Dict[str, Optional[float]], notes: List[str]):
        self.json: str = json_text
        self.data: Dict[str, Any] = json.loads(json_text)
        self._metrics = metrics
        self.notes: List[str] = notes

    def __getitem__(self, key: str) -> Any:
        return self.data[key]

    def __getattr__(self, name: str) -> Any:
        data = self.__dict__.get("data")
        if data is not None and name in data:
            return data[name]
        raise AttributeError(name)

    def __repr__(self) -> str:
        d = self.data
        return (
            f"<mmsim.Result {d['scenario']!r} policy={d['policy']} events={d['events']:,} "
            f"miss_ratio={d['miss_ratio']:.6f} runtime_s={d['runtime_s']:.3f}"
            f"{' PARTIAL' if d['partial'] else ''}>"
        )

    @property
    def warnings(self) -> List[str]:
        """What the result cannot be trusted for (empty when it is whole)."""
        return list(self.data["warnings"])

    @property
    def vmstat(self):
        """/proc/vmstat at the end (counters since the warmup), a Series by counter name."""
        import pandas as pd

        return pd.Series(self.data["vmstat"], name="vmstat")

    @property
    def metrics(self):
        """The metrics ``mmsim compare`` compares (vmstat names, derived ones, per
        memory cgroup ``memcg:/path:name``, per workload), a Series by name."""
        import pandas as pd

        return pd.Series(self._metrics, name="value", dtype="float64")

    @property
    def memcg(self):
        """Each memory cgroup's ``memory.stat``, ``memory.events`` and limits at the
        end, one row per group path (nested values flattened: ``psi_some_avg10``)."""
        import pandas as pd

        rows = {}
        for path, report in self.data["memcg"].items():
            flat: Dict[str, Any] = {}
            _flat("", report, flat)
            rows[path] = flat
        df = pd.DataFrame.from_dict(rows, orient="index")
        df.index.name = "memcg"
        return df

    @property
    def psi(self):
        """/proc/pressure/memory: rows ``some`` and ``full``; avg10, avg60, avg300
        (percent) and total (microseconds)."""
        import pandas as pd

        psi = self.data["psi"]
        return pd.DataFrame.from_dict({k: psi[k] for k in ("some", "full")}, orient="index")

    @property
    def timeseries(self):
        """The stats sampler's samples (set ``stats_interval_ms=...`` to take them;
        empty otherwise), one row per sample: ``t_s``, the vmstat counters so far,
        PSI (``psi_some_avg10``, ...), and ``memory.current`` of every group
        (``memcg_usage_pages:<path>``)."""
        import pandas as pd

        paths = self.data.get("stats_memcg_paths", [])
        rows = []
        for s in self.data.get("stats_samples", []):
            row: Dict[str, Any] = {"t_s": s["t_ns"] / 1e9}
            row.update(s["vmstat"])
            _flat("psi", s["psi"], row)
            for path, pages in zip(paths, s["memcg_usage_pages"]):
                row[f"memcg_usage_pages:{path}"] = pages
            rows.append(row)
        return pd.DataFrame(rows)

    @property
    def workloads(self):
        """Per workload: name, kind, target, phase, pages, events, end_ns."""
        import pandas as pd

        return pd.DataFrame(self.data["workloads"])

    @property
    def traces(self):
        """What each trace replay read (path, format, records, references, skips)."""
        import pandas as pd

        return pd.DataFrame(self.data["trace"])

    def to_dict(self) -> Dict[str, Any]:
        """The whole result as a dict (the parsed JSON)."""
        return self.data
