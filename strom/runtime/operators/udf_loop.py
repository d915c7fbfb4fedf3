"""The per-record loops of the UDF operators, one per shape of user function. bytewax derives its operators from
one ``flat_map_batch``; strom keeps one loop per shape so that a record costs the user call and little else (map
and filter run it in C through ``map``/``filter``), all driven by one operator loop,
:meth:`~strom.runtime.operators.abstract_udf_stream_operator.AbstractUdfStreamOperator.process_elements`.

A loop is ``loop(it, batch) -> out``: it calls the user function for each record of ``it`` — an iterator over
``batch``, so that on an exception the driver knows the failing record from the iterator's position — and returns
the output batch with the timestamp column carried over (:mod:`strom.runtime.streamrecord`), or ``None`` when the
function emitted through the operator's collector. With a key selector ``key_of`` each record is handed over in
its key context: ``backend.current_key`` (and a process function's ``ctx.key``) is the record's key, the key
selector called right before the function, as Flink's ``setKeyContextElement``.

- :func:`map_loop`: one result per record (map, co-map); :func:`filter_loop`: the records whose result is true;
- :func:`flat_map_loop`: an iterable (or ``None``) per record, each output record stamped with its input's time;
- :func:`process_loop`: ``f(value, ctx)`` with the record's timestamp on ``ctx``, results into the collector
  (process, keyed process, co-process, broadcast process); :func:`into_collector` routes another loop's output
  there (co-flat-map, whose yielded ``(OutputTag, value)`` pairs go to side outputs).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from itertools import compress
from operator import truth
from typing import Any

from strom.exceptions import InvalidProgramError
from strom.runtime.operators.collector import TimestampedCollector
from strom.runtime.state.key_groups import stable_hash
from strom.runtime.streamrecord import timestamps_of, with_timestamps

__all__ = [
    "KeyOf",
    "Loop",
    "explain_key_error",
    "filter_loop",
    "flat_map_loop",
    "into_collector",
    "map_loop",
    "process_loop",
    "unopened",
]

#: ``loop(records, batch)``: the output batch of the records, or ``None`` (the output went to the collector)
Loop = Callable[[Iterator[Any], list[Any]], "list[Any] | None"]
KeyOf = Callable[[Any], Any]


def _in_key_context(it: Iterator[Any], keys: Iterator[Any], backend: Any) -> Iterator[Any]:
    """The records of ``it``, each made the current key's record (its key the next of ``keys``) first."""
    for v, k in zip(it, keys, strict=False):
        backend.current_key = k
        yield v


def map_loop(f: Callable[[Any], Any], key_of: KeyOf | None = None, backend: Any = None) -> Loop:
    """``f(value)`` per record, one output record each, with the input's timestamps."""

    def loop(it: Iterator[Any], batch: list[Any]) -> list[Any]:
        records = it if key_of is None else _in_key_context(it, map(key_of, batch), backend)
        return with_timestamps(list(map(f, records)), timestamps_of(batch))

    return loop


def filter_loop(f: Callable[[Any], Any], key_of: KeyOf | None = None, backend: Any = None) -> Loop:
    """The records for which ``f(value)`` is true, with their timestamps."""

    def loop(it: Iterator[Any], batch: list[Any]) -> list[Any]:
        records = it if key_of is None else _in_key_context(it, map(key_of, batch), backend)
        ts = timestamps_of(batch)
        if ts is None:
            return list(filter(f, records))
        keep = list(map(truth, map(f, records)))  # truth right after each call: a failure names its record
        return with_timestamps(list(compress(batch, keep)), list(compress(ts, keep)))

    return loop


def flat_map_loop(f: Callable[[Any], Any], key_of: KeyOf | None = None, backend: Any = None) -> Loop:
    """The records of the iterable ``f(value)`` returns (``None``: none), each with its input record's timestamp."""

    def loop(it: Iterator[Any], batch: list[Any]) -> list[Any]:
        out: list[Any] = []
        extend = out.extend
        records = it if key_of is None else _in_key_context(it, map(key_of, batch), backend)
        ts = timestamps_of(batch)
        if ts is None:
            for v in records:
                r = f(v)
                if r is not None:
                    extend(r)
            return out
        out_ts: list[Any] = []
        for v, t in zip(records, ts, strict=False):
            r = f(v)
            if r is not None:
                n = len(out)
                extend(r)
                out_ts.extend([t] * (len(out) - n))
        return with_timestamps(out, out_ts)

    return loop


def process_loop(
    f: Callable[[Any, Any], Any],
    ctx: Any,
    collector: TimestampedCollector,
    key_of: KeyOf | None = None,
    backend: Any = None,
) -> Loop:
    """``f(value, ctx)`` per record, ``ctx.current_timestamp`` the record's; what it returns goes to ``collector``
    with that timestamp (what it writes to side outputs through ``ctx`` goes there too)."""
    add_all = collector.add_all

    def loop(it: Iterator[Any], batch: list[Any]) -> None:
        ts = timestamps_of(batch)
        if ts is None:
            ctx.current_timestamp = None
            if key_of is None:
                for v in it:
                    r = f(v, ctx)
                    if r is not None:
                        add_all(r, None)
                return
            for v in it:
                ctx.key = backend.current_key = key_of(v)
                r = f(v, ctx)
                if r is not None:
                    add_all(r, None)
            return
        for v, t in zip(it, ts, strict=False):
            if key_of is not None:
                ctx.key = backend.current_key = key_of(v)
            ctx.current_timestamp = t
            r = f(v, ctx)
            if r is not None:
                add_all(r, t)

    return loop


def into_collector(loop: Loop, collector: TimestampedCollector) -> Loop:
    """``loop`` with its output batch handed to ``collector`` (whose flush routes yielded ``(OutputTag, value)``s)."""

    def collecting(it: Iterator[Any], batch: list[Any]) -> None:
        out = loop(it, batch)
        if out:
            ts = timestamps_of(out)
            if ts is None:
                collector.add_all(out, None)
            else:
                collector.add_timestamped(out, ts)

    return collecting


def unopened(it: Iterator[Any], batch: list[Any]) -> None:
    """The loop of an operator before ``open()`` (a module function: an operator is pickled to its TaskManager
    before it opens there, and builds its loops in ``open()``)."""
    raise RuntimeError("expected open() before the first batch; got a batch for an operator not opened yet")


def explain_key_error(exc: Exception, record: Any, key_of: KeyOf | None) -> Exception:
    """An unhashable key surfaces as a ``TypeError`` of the state or the user function when routing needed no hash
    (one consumer): then the key selector's :class:`InvalidProgramError` says so plainly; otherwise ``exc``."""
    if key_of is None or not isinstance(exc, TypeError):
        return exc
    try:
        stable_hash(key_of(record))
    except InvalidProgramError as key_error:
        return key_error
    except Exception:  # the key selector itself failed: report the original error
        return exc
    return exc
