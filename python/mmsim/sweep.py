"""Sweeps: every point of a grid of settings run on all local cores or on a Ray
cluster, each finished point appended to a Parquet dataset, a killed sweep resumed
without redoing any finished point.

A grid is a dict of key -> list of values (a single value is a list of one). The
keys are ``scenario`` (an embedded name, a file, TOML text or a dict), ``trace``,
any ``mmsim run`` flag (``policy``, ``seed``, ``memory``, ``memcg_max``,
``swappiness``, ``swap``, ``cost_variant``, ``target``, ...) and any ``[machine]``
key as ``mmsim run --set`` takes it (``page_cluster``, ``swap.device``). The
points are the grid's cartesian product, the first key varying slowest.

Each point is keyed by a stable hash of its parameters (:func:`point_id`: SHA-256
of the canonical JSON of the key/value pairs, sorted by key), and is stored as
``part-<id>.parquet`` in the output directory, written to a temporary file and
renamed into place when the point finishes: a point's part is there whole or not
at all, so a sweep killed at any moment (``kill -9`` included) and started again
with the same grid and output runs exactly the points without a part. (Parts are
not fsynced; after a crash of the machine itself, a part cut short is found by its
missing Parquet footer and redone.) The key is the parameters only: a sweep
resumed after the simulator changed keeps the earlier points' results.

The local backend starts its workers with ``spawn``: a script calling
:func:`sweep` must do so under ``if __name__ == "__main__":`` (notebooks need
nothing). The
directory is a Parquet dataset: ``pandas.read_parquet(out)`` or
:func:`read_sweep` reads it (every part has the same schema, recorded in
``_schema.txt``; a grid of other keys or value types is refused there, the same
keys with more values extend it).

Each row has the grid's keys as columns (ints, floats, bools or strings, as the
key's values are), ``point`` (the id), ``index`` (the point's place in the grid),
the compared metrics of ``mmsim compare`` as float columns (``miss_ratio``,
``workingset_refault_file``, ``pswpout``, ...), ``extra_metrics`` (the
per-cgroup and per-workload metrics as JSON), ``warnings``, ``partial``,
``elapsed_s`` (the run's wall time), ``worker`` (host:pid), ``cli`` (the
equivalent ``mmsim run ... --json`` command line, when there is one) and
``result_json`` (the run's whole JSON, as ``mmsim run --json`` prints it).

Backends: ``local`` runs the points in a pool of worker processes, one per core
(``workers``); ``ray`` submits one Ray task per point (``num_cpus=1`` and a
``memory`` hint of the run's host memory estimate) to the cluster at
``address`` (``None``: a local one), with every trace put once in the object
store and written once per node to a cache (``trace_shipping="object-store"``),
or read where it is on a shared file system (``"shared-path"``). A shipped
trace is reported under the driver's path, so a row's JSON is the one ``mmsim run``
prints on the driver's machine. Scenario *files* are not shipped: on a cluster of
several machines give scenarios as embedded names, dicts or TOML text, or keep the
files (and the traces they name) on a shared path. A cluster on one machine's
loopback needs ``RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0`` in the environment (Ray
otherwise rewrites 127.0.0.1 to the machine's outward address).
"""

from __future__ import annotations

import argparse
import hashlib
import itertools
import json
import os
import socket
import sys
import tempfile
import time
from typing import Any, Dict, Iterator, List, Mapping, Optional, Sequence, Tuple

__all__ = ["sweep", "read_sweep", "points", "point_id", "main"]

#: Bumped if the hash's input changes (never for a new column).
_HASH_VERSION = "mmsim-sweep-1"


def _canon(value: Any) -> Any:
    """A value as the hash sees it: JSON scalars as they are, paths as strings,
    dicts with sorted keys."""
    if isinstance(value, os.PathLike):
        return os.fspath(value)
    if isinstance(value, Mapping):
        return {str(k): _canon(v) for k, v in sorted(value.items())}
    if isinstance(value, (list, tuple)):
        return [_canon(v) for v in value]
    return value


def point_id(params: Mapping[str, Any]) -> str:
    """The stable id of a point: the first 16 hex digits of the SHA-256 of its
    parameters' canonical JSON (keys sorted), the same in every process, Python
    version and machine."""
    text = json.dumps(
        [_HASH_VERSION, [[k, _canon(params[k])] for k in sorted(params)]],
        sort_keys=True,
        separators=(",", ":"),
        ensure_ascii=True,
        allow_nan=False,
    )
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _values(v: Any) -> List[Any]:
    if isinstance(v, (list, tuple)):
        return list(v)
    return [v]


def points(grid: Mapping[str, Any]) -> List[Dict[str, Any]]:
    """The grid's points in order (the first key varying slowest)."""
    keys = list(grid)
    lists = [_values(grid[k]) for k in keys]
    for k, vs in zip(keys, lists):
        if not vs:
            raise ValueError(f"grid key {k!r}: no values")
    return [dict(zip(keys, combo)) for combo in itertools.product(*lists)]


def _column_type(values: Sequence[Any]) -> str:
    """The Parquet type of a grid key's column: int64, float64, bool or string."""
    if all(isinstance(v, bool) for v in values):
        return "bool"
    if all(isinstance(v, int) and not isinstance(v, bool) for v in values):
        return "int64"
    if all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values):
        return "float64"
    return "string"


def _column_value(value: Any, kind: str) -> Any:
    if kind == "string":
        if isinstance(value, Mapping):
            return json.dumps(_canon(value), sort_keys=True)
        return os.fspath(value) if isinstance(value, os.PathLike) else str(value)
    if kind == "float64":
        return float(value)
    return value


def _schema(grid: Mapping[str, Any], metric_names: Sequence[str]):
    import pyarrow as pa

    types = {
        "bool": pa.bool_(),
        "int64": pa.int64(),
        "float64": pa.float64(),
        "string": pa.string(),
    }
    fields = [pa.field("point", pa.string()), pa.field("index", pa.int64())]
    for k in grid:
        fields.append(pa.field(k, types[_column_type(_values(grid[k]))]))
    fields += [pa.field(m, pa.float64()) for m in metric_names]
    fields += [
        pa.field("extra_metrics", pa.string()),
        pa.field("warnings", pa.string()),
        pa.field("partial", pa.bool_()),
        pa.field("elapsed_s", pa.float64()),
        pa.field("worker", pa.string()),
        pa.field("cli", pa.string()),
        pa.field("result_json", pa.string()),
    ]
    return pa.schema(fields)


def _run_kwargs(params: Mapping[str, Any]) -> Tuple[Any, Dict[str, Any]]:
    """(scenario, keyword arguments of :func:`mmsim.run`) of a point."""
    kw: Dict[str, Any] = {}
    scenario = None
    for k, v in params.items():
        if k == "scenario":
            scenario = v
        elif "." in k:
            kw.setdefault("set", {})[k] = v
        else:
            kw[k] = v
    return scenario, kw


def _cli_line(params: Mapping[str, Any]) -> Optional[str]:
    import shlex

    from . import ScenarioError, cli_args

    scenario, kw = _run_kwargs(params)
    try:
        return shlex.join(["mmsim"] + cli_args(scenario, **kw) + ["--json"])
    except ScenarioError:
        return None


def run_point(params: Mapping[str, Any], trace_label: Optional[str] = None) -> Dict[str, Any]:
    """Runs one point; returns its row (without ``index``). Used by the workers of
    both backends."""
    import mmsim

    scenario, kw = _run_kwargs(params)
    if trace_label is not None:
        kw["_trace_label"] = trace_label
    start = time.perf_counter()
    r = mmsim.run(scenario, **kw)
    elapsed = time.perf_counter() - start
    metric_names = [m for m, _ in mmsim._mmsim.metric_infos()]
    named = set(metric_names)
    row: Dict[str, Any] = {m: r._metrics.get(m) for m in metric_names}
    row["extra_metrics"] = json.dumps(
        {k: v for k, v in r._metrics.items() if k not in named}, sort_keys=True
    )
    row["warnings"] = "\n".join(r.warnings)
    row["partial"] = bool(r.data["partial"])
    row["elapsed_s"] = elapsed
    row["worker"] = f"{socket.gethostname()}:{os.getpid()}"
    row["result_json"] = r.json
    return row


class _Progress:
    """A one-line progress bar on standard error: points done, rate, time left."""

    def __init__(self, total: int, done: int, enabled: Optional[bool]):
        self.total, self.done, self.start_done = total, done, done
        self.enabled = sys.stderr.isatty() if enabled is None else enabled
        self.t0 = time.monotonic()
        self.last = 0.0
        self.show(force=True)

    def show(self, force: bool = False) -> None:
        if not self.enabled:
            return
        now = time.monotonic()
        if not force and now - self.last < 0.1 and self.done < self.total:
            return
        self.last = now
        width = 30
        filled = width * self.done // max(self.total, 1)
        ran = self.done - self.start_done
        elapsed = now - self.t0
        eta = ""
        if ran > 0 and self.done < self.total:
            eta = f" eta {elapsed / ran * (self.total - self.done):.0f}s"
        sys.stderr.write(
            f"\r[{'#' * filled}{'.' * (width - filled)}] {self.done}/{self.total} points"
            f" {elapsed:.1f}s{eta}   "
        )
        sys.stderr.flush()

    def step(self) -> None:
        self.done += 1
        self.show()

    def close(self) -> None:
        if self.enabled:
            self.show(force=True)
            sys.stderr.write("\n")
            sys.stderr.flush()


class _Store:
    """The output directory: one Parquet part per finished point, written whole
    (temporary file renamed into place)."""

    def __init__(self, out: Optional[str], schema):
        self.out = out
        self.schema = schema
        self.rows: Dict[str, Dict[str, Any]] = {}
        if out is not None:
            os.makedirs(out, exist_ok=True)
            for name in os.listdir(out):
                # A temporary file left by a killed sweep: never renamed, so never done.
                if name.startswith(".part-") and name.endswith(".tmp"):
                    os.unlink(os.path.join(out, name))
            # Every part of a dataset has one schema (the grid's keys and their types,
            # the metrics): recorded in `_schema.txt` (pyarrow skips `_` files) by the
            # first sweep; a sweep of other keys into the same directory is refused
            # rather than mixed in.
            mark = os.path.join(out, "_schema.txt")
            text = schema.to_string(show_schema_metadata=False)
            if os.path.exists(mark):
                with open(mark) as f:
                    if f.read() != text:
                        raise ValueError(
                            f"{out} holds a sweep of other keys or column types; give "
                            "another output directory (or the same grid)"
                        )
            else:
                with open(mark + ".tmp", "w") as f:
                    f.write(text)
                os.replace(mark + ".tmp", mark)

    def done(self) -> set:
        """The points with a whole part. A part is renamed into place only once
        written, so a killed sweep leaves none half-written; parts are not fsynced
        (a point costs milliseconds), so after a crash of the machine itself a part
        may be cut short: one without Parquet's closing magic is deleted and redone."""
        if self.out is None:
            return set(self.rows)
        done = set()
        for n in os.listdir(self.out):
            if not (n.startswith("part-") and n.endswith(".parquet")):
                continue
            path = os.path.join(self.out, n)
            with open(path, "rb") as f:
                f.seek(0, os.SEEK_END)
                whole = f.tell() >= 12 and (f.seek(-4, os.SEEK_END), f.read(4))[1] == b"PAR1"
            if whole:
                done.add(n[len("part-") : -len(".parquet")])
            else:
                os.unlink(path)
        return done

    def add(self, row: Dict[str, Any], written: bool = False) -> None:
        """Records a finished point's row; writes its part unless a worker did."""
        if self.out is None:
            self.rows[row["point"]] = row
        elif not written:
            _write_part(self.out, self.schema, row)


def _write_part(out: str, schema, row: Dict[str, Any]) -> None:
    """Writes one point's row as ``part-<id>.parquet``: whole, then renamed into place."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pa.Table.from_pylist([row], schema=schema)
    final = os.path.join(out, f"part-{row['point']}.parquet")
    fd, tmp = tempfile.mkstemp(prefix=f".part-{row['point']}-", suffix=".tmp", dir=out)
    try:
        with os.fdopen(fd, "wb") as f:
            pq.write_table(table, f)
        os.replace(tmp, final)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def _full_row(
    i: int, pid: str, params: Mapping[str, Any], kinds: Mapping[str, str], row: Dict[str, Any]
) -> Dict[str, Any]:
    """A point's stored row: id, place, the grid's keys, the run's columns, the CLI line."""
    full: Dict[str, Any] = {"point": pid, "index": i}
    for k, kind in kinds.items():
        full[k] = _column_value(params[k], kind)
    full.update(row)
    full["cli"] = _cli_line(params)
    return full


def _local_point(
    i: int,
    pid: str,
    params: Dict[str, Any],
    kinds: Dict[str, str],
    out: Optional[str],
    schema,
) -> Optional[Dict[str, Any]]:
    """A local worker's task: run the point and write its part itself (the writing
    is spread over the workers); the row goes back only when nothing is stored."""
    full = _full_row(i, pid, params, kinds, run_point(params))
    if out is None:
        return full
    _write_part(out, schema, full)
    return None


def read_sweep(out: str):
    """A sweep's output directory as one DataFrame, in grid order (``index``).
    Every part has the sweep's schema, so the directory is read as one dataset
    (files starting with ``.``, the temporary ones, are not part of it)."""
    import pandas as pd
    import pyarrow.parquet as pq

    if not any(n.startswith("part-") and n.endswith(".parquet") for n in os.listdir(out)):
        return pd.DataFrame()
    df = pq.read_table(out).to_pandas()
    return df.sort_values("index", kind="stable").reset_index(drop=True)


def _watch_parent(parent: int) -> None:
    """In a local worker: exit when the sweep's process is gone (a driver killed with
    ``kill -9`` cannot shut its pool down, and an orphaned worker would run on)."""
    import threading

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(0.2)
        os._exit(1)

    threading.Thread(target=watch, daemon=True, name="mmsim-parent-watch").start()


def _local(todo, workers, on_row, kinds, out, schema) -> None:
    import concurrent.futures as cf
    import multiprocessing as mp

    workers = workers or os.cpu_count() or 1
    # spawn: the parent writes Parquet (pyarrow threads), which a fork would copy
    # mid-lock.
    with cf.ProcessPoolExecutor(
        max_workers=workers,
        mp_context=mp.get_context("spawn"),
        initializer=_watch_parent,
        initargs=(os.getpid(),),
    ) as pool:
        futures = {
            pool.submit(_local_point, i, pid, params, kinds, out, schema): (i, pid, params)
            for i, pid, params in todo
        }
        try:
            for f in cf.as_completed(futures):
                i, pid, params = futures[f]
                on_row(i, pid, params, f.result())
        except BaseException:
            for f in futures:
                f.cancel()
            raise


def _cache_trace(data_or_ref: Any, sha: str, name: str) -> str:
    """Writes a shipped trace once per node (per cache directory); returns its path."""
    root = os.path.join(tempfile.gettempdir(), "mmsim-traces", sha)
    path = os.path.join(root, name)
    if not os.path.exists(path):
        os.makedirs(root, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=root, suffix=".tmp")
        with os.fdopen(fd, "wb") as f:
            f.write(data_or_ref)
        os.replace(tmp, path)
    return path


def _ray_point(
    params: Dict[str, Any], data: Optional[bytes], sha: Optional[str], label: Optional[str]
) -> Dict[str, Any]:
    """The Ray task: materialise a shipped trace (``data``, resolved by Ray from the
    object store), run the point, report the trace under the driver's name."""
    if data is not None and sha is not None and label is not None:
        params = dict(params)
        params["trace"] = _cache_trace(data, sha, os.path.basename(label))
    return run_point(params, trace_label=label if data is not None else None)


def _host_memory(params: Mapping[str, Any]) -> int:
    """The host memory a point's run needs at most, bytes."""
    import mmsim

    scenario, kw = _run_kwargs(params)
    sets = kw.pop("set", None)
    options, sets = mmsim._split(kw, sets)
    kind, text = mmsim._base(scenario)
    return int(mmsim._mmsim.host_memory_estimate(kind, text, options, sets))


def _ray(todo, address, trace_shipping, on_row, ray_init) -> None:
    import ray

    if not ray.is_initialized():
        ray.init(address=address, **(ray_init or {}))
    # Every distinct trace read and put in the object store once; tasks take the
    # reference, so each node fetches it once and caches it on disk.
    refs: Dict[str, Tuple[Any, str]] = {}
    if trace_shipping == "object-store":
        for _, _, params in todo:
            t = params.get("trace")
            if t is not None and os.fspath(t) not in refs:
                with open(os.fspath(t), "rb") as f:
                    data = f.read()
                refs[os.fspath(t)] = (ray.put(data), hashlib.sha256(data).hexdigest()[:16])
    elif trace_shipping != "shared-path":
        raise ValueError(f"trace_shipping={trace_shipping!r}: object-store or shared-path")
    remote = ray.remote(_ray_point)
    pending: Dict[Any, Tuple[int, str, Dict[str, Any]]] = {}
    for i, pid, params in todo:
        data, sha, label = None, None, None
        t = params.get("trace")
        if t is not None and os.fspath(t) in refs:
            data, sha = refs[os.fspath(t)]
            label = os.fspath(t)
        # Resource hints: one CPU (a run is single-threaded) and the run's host memory
        # estimate, so the scheduler packs no more runs on a node than fit.
        task = remote.options(num_cpus=1, memory=max(_host_memory(params), 1 << 20), max_retries=2)
        pending[task.remote(params, data, sha, label)] = (i, pid, params)
    while pending:
        ready, _ = ray.wait(list(pending), num_returns=1)
        for ref in ready:
            i, pid, params = pending.pop(ref)
            on_row(i, pid, params, ray.get(ref))


def sweep(
    grid: Mapping[str, Any],
    *,
    out: Optional[str] = None,
    backend: str = "local",
    workers: Optional[int] = None,
    address: Optional[str] = None,
    progress: Optional[bool] = None,
    trace_shipping: str = "object-store",
    ray_init: Optional[Mapping[str, Any]] = None,
):
    """Run every point of ``grid`` and return a DataFrame, one row per point, the
    grid's keys as columns beside the metrics (see the module's docstring).

    ``out`` is the Parquet dataset directory each finished point is appended to;
    a sweep started again with the same ``out`` runs only the points not there
    (``None``: nothing is stored, nothing resumed). ``backend`` is ``"local"``
    (``workers`` processes, default one per core) or ``"ray"`` (the cluster at
    ``address``, default a local one started for the sweep; ``ray_init`` adds
    arguments to ``ray.init``). ``progress``: a bar on standard error (default:
    when it is a terminal).

    Every point is checked before any runs (its scenario built and validated),
    so a bad value fails at once with :class:`mmsim.ScenarioError` naming it.
    """
    import mmsim

    pts = points(grid)
    metric_names = [m for m, _ in mmsim._mmsim.metric_infos()]
    clash = set(grid) & (set(metric_names) | {"point", "index", "extra_metrics", "warnings",
                                               "partial", "elapsed_s", "worker", "cli",
                                               "result_json"})
    if clash:
        raise ValueError(f"grid keys {sorted(clash)} are also result columns")
    ids = [point_id(p) for p in pts]
    if len(set(ids)) != len(ids):
        raise ValueError("the grid lists a point twice (a key has a repeated value)")
    for p in pts:
        scenario, kw = _run_kwargs(p)
        try:
            mmsim.scenario_toml(scenario, **kw)
        except mmsim.MmsimError as e:
            raise type(e)(f"point {p}: {e}") from None
    kinds = {k: _column_type(_values(grid[k])) for k in grid}
    store = _Store(out, _schema(grid, metric_names))
    done = store.done()
    todo = [(i, pid, p) for i, (pid, p) in enumerate(zip(ids, pts)) if pid not in done]
    bar = _Progress(len(pts), len(pts) - len(todo), progress)

    def on_row(i: int, pid: str, params: Mapping[str, Any], row: Optional[Dict[str, Any]]) -> None:
        if row is None:  # a local worker stored it
            pass
        elif "point" in row:  # a local worker's full row (nothing is stored)
            store.add(row)
        else:  # a Ray task's run columns: stored here, where the output is
            store.add(_full_row(i, pid, params, kinds, row))
        bar.step()

    try:
        if todo:
            if backend == "local":
                _local(todo, workers, on_row, kinds, out, store.schema)
            elif backend == "ray":
                _ray(todo, address, trace_shipping, on_row, ray_init)
            else:
                raise ValueError(f"backend={backend!r}: local or ray")
    finally:
        bar.close()
    if out is not None:
        df = read_sweep(out)
        return df[df["point"].isin(set(ids))].reset_index(drop=True)
    import pandas as pd

    rows = [store.rows[pid] for pid in ids]
    return pd.DataFrame(rows, columns=[f.name for f in store.schema])


def _load_grid(path: str) -> Dict[str, Any]:
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover
        import tomli as tomllib
    with open(path, "rb") as f:
        grid = tomllib.load(f)
    # `[machine]` sub-tables name dotted keys: swap = { device = [...] } -> swap.device
    out: Dict[str, Any] = {}

    def walk(prefix: str, table: Mapping[str, Any]) -> None:
        for k, v in table.items():
            key = f"{prefix}.{k}" if prefix else k
            if isinstance(v, Mapping) and key != "scenario":
                walk(key, v)
            else:
                out[key] = v

    walk("", grid)
    return out


def main(argv: Optional[Sequence[str]] = None) -> int:
    """``mmsim sweep GRID.toml --out DIR [--ray ADDRESS] [--workers N]`` (the CLI runs
    this module)."""
    import mmsim

    ap = argparse.ArgumentParser(
        prog="mmsim sweep",
        description="Run every point of a grid (a TOML file of key = [values]) and append "
        "each result to a Parquet dataset; a killed sweep started again redoes no "
        "finished point.",
    )
    ap.add_argument("grid", help="the grid: a TOML file, each key a list of values")
    ap.add_argument("--out", required=True, help="the Parquet dataset directory")
    ap.add_argument("--ray", metavar="ADDRESS", help="run on this Ray cluster (auto: the "
                    "one this machine belongs to)")
    ap.add_argument("--workers", type=int, help="local worker processes (default: one per core)")
    ap.add_argument("--quiet", "-q", action="store_true", help="no progress bar")
    a = ap.parse_args(argv)
    try:
        grid = _load_grid(a.grid)
    except (OSError, ValueError) as e:
        print(f"error: {a.grid}: {e}", file=sys.stderr)
        return 2
    try:
        df = sweep(
            grid,
            out=a.out,
            backend="ray" if a.ray else "local",
            address=a.ray,
            workers=a.workers,
            progress=False if a.quiet else None,
        )
    except (mmsim.MmsimError, ValueError) as e:
        print(f"error: {a.grid}: {e}", file=sys.stderr)
        return 2
    print(f"{len(df)} points in {a.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
