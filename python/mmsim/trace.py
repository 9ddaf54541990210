"""Traces: :func:`info` summarises one in a single pass (``mmsim trace info``)."""

from __future__ import annotations

import json
import os
from typing import Any, Dict, Optional, Sequence, Union

from . import _mmsim


class TraceInfo(dict):
    """``mmsim trace info --json``'s report as a dict (``footprint_pages``,
    ``references``, ``reads``, ``writes``, ``cold``, ``reuse_distance``, ``read``,
    ...), with the miss-ratio curve as a DataFrame in :attr:`mrc`."""

    @property
    def mrc(self):
        """The plain-LRU miss-ratio curve: entries, hits, misses, miss_ratio; each row
        equals a full ``mmsim run --policy lru --memcg-max <entries>p``."""
        import pandas as pd

        return pd.DataFrame(self["lru_mrc"], columns=["entries", "hits", "misses", "miss_ratio"])


def info(
    path: Union[str, "os.PathLike[str]"],
    *,
    format: str = "auto",
    sizes: Optional[Sequence[int]] = None,
    limit: Optional[int] = None,
    csv_columns: Optional[str] = None,
    sample: Optional[float] = None,
    sample_size: Optional[int] = None,
) -> TraceInfo:
    """Read a trace once: footprint, reads and writes, reuse (LRU stack) distances
    and the exact plain-LRU miss-ratio curve at ``sizes`` entries (default 1, 2,
    5, 10, 20, 50 and 100 % of the footprint) — ``mmsim trace info``.

    ``format`` is ``auto`` (detected from the content; the reason is in
    ``info["sniffed"]``) or a name from ``mmsim trace formats``; ``csv_columns``
    describes a ``csv`` trace (``"key=2,op=3,delimiter=tab"``). ``sample`` (a
    rate such as 0.01) estimates everything from a SHARDS sample of the keys
    (``mmsim trace info --sample``; ``info["sample"]`` says so); ``sample_size``
    (a number of keys such as 65536) a fixed-size SHARDS sample whose rate falls
    as keys arrive (``--sample-size``), so memory is bounded whatever the
    footprint. The GIL is
    released while the trace is read. Raises :class:`mmsim.TraceError` for a
    trace that cannot be read, :class:`mmsim.ScenarioError` for a bad argument.
    """
    raw = _mmsim.trace_info(
        os.fspath(path),
        format,
        None if sizes is None else [int(s) for s in sizes],
        limit,
        csv_columns,
        sample,
        sample_size,
    )
    return TraceInfo(json.loads(raw))


__all__ = ["info", "TraceInfo"]
