"""Tapes: a recorded graph kept as records that the cyclic garbage collector never walks.

Each recorded operation is one record, a plain tuple:

    (op code, (output shape, dtype), one reference per differentiable input, saved values...)

The op code is an int (its place in `NODE_CLASSES`, which the op registry fills); a reference
is an int: `d > 0` is the record d places before this one in the same tape (a small number,
which Python keeps once), `~k` (below 0) is the tape's link `k`, a node outside it (a leaf's
AccumulateGrad, a record of an older tape, a custom Function's node), and None is an input
that needs no gradient; the saved values are arrays, numbers and shapes.
CPython stops tracking a tuple that holds only such untracked things; and the records are kept
in sealed chunks, tuples of CHUNK records (a list is always walked, item by item), so a graph
of a million operations costs a full collection a few hundred objects, not millions.

A tensor made by an operation holds `(tape, index)`; its `grad_fn` is a small node object made
on request (`proxy`) and cached weakly. Hooks, retained gradients, metadata and anomaly traces
live in side tables of the tape, keyed by index. A tape lives as long as a tensor (or a newer
tape, or a node object) refers to it.

Creation order, which backward runs newest first (as PyTorch), is kept per run of records:
while records go to one tape with nothing made elsewhere and no in-place change in between,
they number on from the run's start, so a record stores neither its number nor its in-place
clock; `runs` holds (first index, first number, clock) for each run.
"""

from __future__ import annotations

import itertools
import weakref

from . import versions
from .versions import InplaceClock

# An op's record goes to the tape of an input made at most this many records before the tape's
# end; an input further back starts a new tape. Appending anywhere would keep, for as long as
# the tape lives, every branch ever taken from an early tensor (a loop over batches that reuses
# an encoder's output); appending only at the very end would start a tape per branch of
# `y = tanh(y * w + y * b)`.
WINDOW = 16

# op code -> the node class of that op (ops/registry.py appends one per op)
NODE_CLASSES: list = []

# Records are appended to a list, which is sealed into a tuple every CHUNK records.
SHIFT = 10
CHUNK = 1 << SHIFT
_MASK = CHUNK - 1

_serials = itertools.count()


class Tape:
    """One graph's records, the links out of it, and its side tables."""

    __slots__ = ("records", "chunks", "base", "links", "link_of", "runs", "open", "me", "serial", "special", "hooks",
                 "traces", "notes", "proxies", "__weakref__")

    def __init__(self) -> None:
        self.records: list = []  # the newest records: record `base + i` is records[i]
        self.chunks: list = []  # tuples of CHUNK records each, the older ones (a list where one was replaced)
        self.base = 0  # how many records the chunks hold
        self.links: list = []  # [(node, output_nr, the key)]: the key is kept alive with the link
        self.link_of: dict = {}  # key -> index into links
        self.runs: list = []  # flat: first index, first creation number, in-place clock; per run
        self.open = False  # whether the current run is this tape's (records may be appended to it)
        self.me = weakref.ref(self)  # what _Open compares, without keeping the tape alive
        self.serial = next(_serials)  # tapes link only to older tapes (no reference cycles)
        self.special = False  # a record keeps tensors or lists: backward reads it on its general path
        self.hooks = None  # index -> the node's hook table (Node._hooks)
        self.traces = None  # index -> forward stack (anomaly mode)
        self.notes = None  # index -> the piece number of a split, chunk or unbind
        self.proxies = None  # index -> weakref of the node object handed out
        _LIVE[self.serial] = InplaceClock.ticks

    def __del__(self) -> None:
        _LIVE.pop(self.serial, None)
        if self.open:
            _close_run(self)

    # -- appending ---------------------------------------------------------------------------------

    def start_run(self) -> None:
        """Make this tape's current run the open one: what is appended next numbers on from it."""
        close_run()
        self.runs += (self.base + len(self.records), _Open.next_seq, InplaceClock.ticks)
        self.open = True
        _Open.me = self.me

    def seal(self) -> None:
        """The newest records, CHUNK of them, become a chunk (called as the list fills up)."""
        self.chunks.append(tuple(self.records))
        self.records = []
        self.base += CHUNK

    # -- the records as one list, and one at a time ----------------------------------------------------

    def __len__(self) -> int:
        return self.base + len(self.records)

    def record(self, at: int) -> tuple:
        if at >= self.base:
            return self.records[at - self.base]
        return self.chunks[at >> SHIFT][at & _MASK]

    def replace(self, at: int, record: tuple) -> None:
        """Put `record` in place of record `at` (freed saved values, traced ones)."""
        if at >= self.base:
            self.records[at - self.base] = record
            return
        chunk = self.chunks[at >> SHIFT]
        if chunk.__class__ is tuple:  # a list until resealed (see `unpack`)
            chunk = self.chunks[at >> SHIFT] = list(chunk)
        chunk[at & _MASK] = record

    def unpack(self) -> list:
        """Every record, as one new list (backward reads and frees them there; see `repack`)."""
        flat = []
        for chunk in self.chunks:
            flat += chunk
        flat += self.records
        return flat

    def repack(self, flat: list) -> None:
        """Take the records back from `unpack`'s list, changed."""
        self.chunks = [tuple(flat[k:k + CHUNK]) for k in range(0, self.base, CHUNK)]
        self.records[:] = flat[self.base:]

    def link(self, node, nr: int, key) -> int:
        """The reference (below 0) to `node`'s output `nr`, outside this tape. `key` names it in
        `link_of` (an id, or a leaf's reference to its AccumulateGrad, which ops look up)."""
        k = self.link_of.get(key)
        if k is None:
            k = self.link_of[key] = len(self.links)
            self.links.append((node, nr, key))
        return ~k

    # -- reading ----------------------------------------------------------------------------------

    def seq(self, at: int) -> int:
        """The creation number of record `at`."""
        runs = self.runs
        for k in range(len(runs) - 3, -1, -3):
            if runs[k] <= at:
                return runs[k + 1] + at - runs[k]
        raise IndexError(at)

    def clock(self, at: int) -> int:
        """The in-place clock when record `at` was made."""
        runs = self.runs
        for k in range(len(runs) - 3, -1, -3):
            if runs[k] <= at:
                return runs[k + 2]
        raise IndexError(at)

    def node(self, ref, at: int):
        """(node, output_nr) that reference `ref` of record `at` names ((None, 0) for None)."""
        if ref is None:
            return None, 0
        if ref > 0:
            return self.proxy(at - ref), 0
        node, nr, _ = self.links[~ref]
        return node, nr

    def proxy(self, at: int):
        """The node object of record `at`: the same object for as long as one is alive."""
        cache = self.proxies
        if cache is None:
            cache = self.proxies = {}
        else:
            ref = cache.get(at)
            if ref is not None:
                node = ref()
                if node is not None:
                    return node
        node = _new(NODE_CLASSES[self.record(at)[0]])
        node._tape = self
        node._at = at
        cache[at] = weakref.ref(node)
        return node

    def side(self, table: str, at: int, create: bool = False):
        """Record `at`'s entry in side table `table` (hooks, traces, notes); None if it has none."""
        entries = getattr(self, table)
        if entries is None:
            if not create:
                return None
            entries = {}
            setattr(self, table, entries)
        entry = entries.get(at)
        if entry is None and create:
            entry = entries[at] = {}
        return entry


_new = object.__new__


class _Open:
    """The open run: the tape that records number on in, and the next creation number otherwise."""

    me = None  # the open tape's `me`
    next_seq = 0  # the creation number of the next node made when no run is open


def _close_run(tape: Tape) -> None:
    runs = tape.runs
    _Open.next_seq = runs[-2] + tape.base + len(tape.records) - runs[-3]
    tape.open = False
    _Open.me = None


def close_run() -> None:
    """End the open run (another tape, a node outside tapes or an in-place change comes next)."""
    me = _Open.me
    if me is not None:
        tape = me()
        if tape is not None:
            _close_run(tape)
        _Open.me = None


def next_seq() -> int:
    """A creation number for a node made outside the tapes (a leaf's, a custom Function's)."""
    close_run()
    n = _Open.next_seq
    _Open.next_seq = n + 1
    return n


class _Sequence:
    """`next(_sequence)`: creation numbers, shared by the tapes' records and every other node."""

    def __iter__(self):
        return self

    def __next__(self) -> int:
        return next_seq()


sequence = _Sequence()

# serial -> in-place clock at the tape's making, for every live tape: events older than the
# oldest cannot concern any record (versions.py prunes them).
_LIVE: dict = {}


def _oldest_clock():
    return min(_LIVE.values()) if _LIVE else None


versions.OLDEST = _oldest_clock
versions.CLOSE = close_run
