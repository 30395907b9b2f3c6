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
clock; `runs` holds (first index, first number, clock) for each run, `starts` the first indices
alone, which `seq` and `clock` search by bisection.

Threads. A tape belongs to the thread that made it (`owner`): only that thread appends to it,
and each thread has its own open run. A run's numbers are a block of its own, taken from one
process-wide counter when the run starts (`next` on an itertools.count is atomic under the GIL),
so nothing shared is read and then written. A record is always numbered after its inputs: an
input of the same thread is in this run or an earlier one; an input on another thread's tape
starts a new run (`start_run`), whose block is taken after that input was made. A thread never
appends to another's tape: an op on another thread's tensor starts a tape of its own that links
to it. Backward may read a tape while its owner appends: the owner's `seal`, every rewriting
of records (`replace`, `unpack`...`repack`) and every read of the unsealed ones hold the tape's
lock, and `repack` writes back only the records that backward read.

What a tape keeps. A result tensor holds its record's own (shape, dtype) tuple as its token, so
that tuple's reference count says whether the tensor lives; `sweep` frees the saved values of
the records that nothing live leads to, as PyTorch frees the nodes whose outputs died.
"""

from __future__ import annotations

import gc
import itertools
import sys
import threading
import weakref
from _thread import get_ident
from bisect import bisect_right

import numpy as np

from . import versions
from .versions import InplaceClock

# An op's record goes to the tape of an input made at most this many records before the tape's
# end; an input further back starts a new tape. Appending anywhere would keep, for as long as
# the tape lives, every branch ever taken from an early tensor (a loop over batches that reuses
# an encoder's output); appending only at the very end would start a tape per branch of
# `y = tanh(y * w + y * b)`.
WINDOW = 16

# A record whose differentiable inputs are all leaves joins the thread's open tape while that
# tape is young: no chunk sealed yet, under JOIN_BYTES of array results, and nothing on it that
# sends backward off its lean path (a record keeping tensors, hooks, a custom Function). A tape of its own for each
# such record made a program of many statements (`y = y * a + x * b`, line after line) a graph
# of as many tapes, each one object for the collector and one round of backward's bookkeeping.
# The bounds keep what a surviving result can pin of unrelated graphs small, and a graph's
# backward off the lean path only for what it reaches itself, or shares a tape with briefly.
JOIN_BYTES = 1 << 16
# ... and while it links to at most this many other tapes, each of them lean as far as it tells.
SOURCES = 4

# op code -> the node class of that op (ops/registry.py appends one per op)
NODE_CLASSES: list = []

# The (shape, dtype) of a 0-d float64 record whose inputs are scalars without a token: one tuple
# shared by all of them, which no tensor holds as its token (see `sweep`).
SCALAR_META = ((), np.dtype(np.float64))

# A tape takes at most CAP records; the next go to a new tape. Scalar records of scalars are
# always kept (see `sweep`), so this bounds what one surviving scalar keeps.
CAP = 8192
# A tape sweeps when the results appended since its last sweep pass this many bytes (or as many
# as it kept then), and at each full collection once it has passed BIG_TAPE bytes in all.
SWEEP_BYTES = 8 << 20
BIG_TAPE = 1 << 20

# Records are appended to a list, which is sealed into a tuple every CHUNK records.
SHIFT = 10
CHUNK = 1 << SHIFT
_MASK = CHUNK - 1

_serials = itertools.count()

# Each run of records, and each node made outside the tapes, takes the next block of creation
# numbers: a run numbers its records on from the block's first number. A run ends where its
# records are sealed into a chunk, so it never holds more than CHUNK records, and never reaches
# the next block (the numbers stay below the leaves', node.py's _ACCUMULATE_PRIORITY).
_blocks = itertools.count(1)


class Tape:
    """One graph's records, the links out of it, and its side tables."""

    __slots__ = ("records", "chunks", "base", "links", "link_of", "runs", "starts", "open", "owner", "lock", "me",
                 "serial", "special", "foreign", "sources", "hooks", "traces", "notes", "proxies", "full", "bytes", "sweep_at", "busy",
                 "__weakref__")

    def __init__(self) -> None:
        self.records: list = []  # the newest records: record `base + i` is records[i]
        self.chunks: list = []  # tuples of CHUNK records each, the older ones (a list where one was replaced)
        self.base = 0  # how many records the chunks hold
        self.links: list = []  # [(node, output_nr, the key)]: the key is kept alive with the link
        self.link_of: dict = {}  # key -> index into links
        self.runs: list = []  # flat: first index, first creation number, in-place clock; per run
        self.starts: list = []  # each run's first index
        self.open = 0  # the owner's thread id while its open run is this tape's (records may be appended)
        self.owner = get_ident()  # the thread that appends to this tape
        self.lock = threading.RLock()  # held while records are rewritten or sealed
        self.me = weakref.ref(self)  # what _OPEN holds, without keeping the tape alive
        self.serial = next(_serials)  # tapes link only to older tapes (no reference cycles)
        self.special = False  # a record keeps tensors or lists: backward reads it on its general path
        self.foreign = False  # a link to a node object outside the tapes (a custom Function's): the same
        self.sources = None  # the older tapes this one links to (a list), where it links to any
        self.hooks = None  # index -> the node's hook table (Node._hooks)
        self.traces = None  # index -> forward stack (anomaly mode)
        self.notes = None  # index -> the piece number of a split, chunk or unbind
        self.proxies = None  # index -> weakref of the node object handed out
        self.full = False  # CAP records: nothing more is appended
        self.bytes = 0  # results' bytes appended since the last sweep (arrays only)
        self.sweep_at = BIG_TAPE  # sweep when `bytes` reaches it
        self.busy = False  # a sweep or a backward of the records runs (under the lock)
        _LIVE[self.serial] = InplaceClock.ticks

    def __del__(self) -> None:
        _LIVE.pop(self.serial, None)
        _BIG.pop(self.serial, None)
        if self.open:
            me = _OPEN.get(self.open)
            if me is self.me:
                _OPEN.pop(self.open, None)

    # -- appending ---------------------------------------------------------------------------------

    def start_run(self) -> None:
        """Make this tape the thread's open run, numbered from a new block: what is appended
        next numbers on from it (called by the owner only)."""
        ident = self.owner
        close_run(ident)
        start = self.base + len(self.records)
        self.runs += (start, next(_blocks) << SHIFT, InplaceClock.ticks)
        self.starts.append(start)
        self.open = ident
        _OPEN[ident] = self.me

    def seal(self) -> None:
        """The newest records, CHUNK of them, become a chunk (called as the list fills up)."""
        with self.lock:
            self.chunks.append(tuple(self.records))
            self.records = []
            self.base += CHUNK
        if self.base >= CAP:
            self.full = True
            close_run(self.owner)
        elif self.open:  # a run ends with its chunk (see _blocks)
            self.start_run()

    # -- the records as one list, and one at a time ----------------------------------------------------

    def __len__(self) -> int:
        return self.base + len(self.records)

    def record(self, at: int) -> tuple:
        if at < self.base:  # sealed: a chunk is there before `base` counts it
            return self.chunks[at >> SHIFT][at & _MASK]
        if self.owner == get_ident():  # only the owner seals: `records` and `base` hold still
            return self.records[at - self.base]
        with self.lock:  # the newest: `records` and `base` change together when the owner seals
            if at >= self.base:
                return self.records[at - self.base]
            return self.chunks[at >> SHIFT][at & _MASK]

    def replace(self, at: int, record: tuple) -> None:
        """Put `record` in place of record `at` (freed saved values, traced ones)."""
        with self.lock:
            if at >= self.base:
                self.records[at - self.base] = record
                return
            chunk = self.chunks[at >> SHIFT]
            if chunk.__class__ is tuple:  # a list until resealed (see `unpack`)
                chunk = self.chunks[at >> SHIFT] = list(chunk)
            chunk[at & _MASK] = record

    def unpack(self) -> list:
        """Every record, as one new list (backward reads and frees them there; see `repack`).
        The caller holds the lock from here to `repack`."""
        flat = []
        for chunk in self.chunks:
            flat += chunk
        flat += self.records
        return flat

    def repack(self, flat: list) -> None:
        """Take the records back from `unpack`'s list, changed. Records the owner appended since
        are left as they are (`seal` waited for the lock, so `base` is unchanged)."""
        base = self.base
        self.chunks = [tuple(flat[k:k + CHUNK]) for k in range(0, base, CHUNK)]
        self.records[:len(flat) - base] = flat[base:]

    def link(self, node, nr: int, key) -> int:
        """The reference (below 0) to `node`'s output `nr`, outside this tape. `key` names it in
        `link_of` (an id, or a leaf's reference to its AccumulateGrad, which ops look up)."""
        k = self.link_of.get(key)
        if k is None:
            k = self.link_of[key] = len(self.links)
            self.links.append((node, nr, key))
        return ~k

    # -- freeing what nothing live needs ------------------------------------------------------------

    def sweep(self) -> bool:
        """Free the saved values of every record that nothing live leads to; False where the
        tape is busy (a backward reads it, or a sweep runs already).

        Live: a record whose result tensor lives (its token, the record's own (shape, dtype)
        tuple, is held by more than the record: ops make the tensor before they append the
        record), a record whose node object lives (`grad_fn`, a link from another tape or a
        node, a tensor placed at it), a record with hooks or a retained gradient, a scalar
        record of scalars (no token tells), and every record these lead to. A backward from
        anything that lives reaches only live records, so it never meets one this freed."""
        if self.busy or not self.lock.acquire(blocking=False):
            return False
        try:
            if self.busy:  # this thread's own backward, interrupted by a collection
                return False
            self.busy = True
            flat = self.unpack()
            n = len(flat)
            live = bytearray(n)
            stack = []
            count = sys.getrefcount
            for i in range(n):
                meta = flat[i][1]
                # the record, `meta` and getrefcount's argument: 3 where no tensor holds it
                if meta is SCALAR_META or count(meta) > 3:
                    live[i] = 1
                    stack.append(i)
            marks = []
            if self.proxies:
                marks += [at for at, ref in list(self.proxies.items()) if ref() is not None]
            if self.hooks:
                marks += list(self.hooks)
            for i in marks:
                if i < n and not live[i]:
                    live[i] = 1
                    stack.append(i)
            classes = NODE_CLASSES
            while stack:
                i = stack.pop()
                record = flat[i]
                op = classes[record[0]].op
                for ref in (record[2] if op.variadic else record[2:op.head]):
                    if ref is not None and ref > 0 and not live[i - ref]:
                        live[i - ref] = 1
                        stack.append(i - ref)
            kept = 0
            freed = False
            for i in range(n):
                record = flat[i]
                head = classes[record[0]].op.head
                if len(record) > head:
                    if live[i]:
                        shape, dtype = record[1]
                        kept += int(np.prod(shape)) * dtype.itemsize
                    else:
                        flat[i] = record[:head]
                        freed = True
            if freed:
                self.repack(flat)
            self.bytes = 0
            self.sweep_at = max(SWEEP_BYTES, kept)
            if self.serial not in _BIG:
                _BIG[self.serial] = self.me
            return True
        finally:
            self.busy = False
            self.lock.release()

    # -- reading ----------------------------------------------------------------------------------

    def seq(self, at: int) -> int:
        """The creation number of record `at`."""
        k = 3 * (bisect_right(self.starts, at) - 1)
        if k < 0:
            raise IndexError(at)
        runs = self.runs
        return runs[k + 1] + at - runs[k]

    def clock(self, at: int) -> int:
        """The in-place clock when record `at` was made."""
        k = 3 * (bisect_right(self.starts, at) - 1)
        if k < 0:
            raise IndexError(at)
        return self.runs[k + 2]

    def node(self, ref, at: int):
        """(node, output_nr) that reference `ref` of record `at` names ((None, 0) for None)."""
        if ref is None:
            return None, 0
        if ref > 0:
            return self.proxy(at - ref), 0
        node, nr, _ = self.links[~ref]
        return node, nr

    def proxy(self, at: int):
        """The node object of record `at`: the same object for as long as one is alive, in
        every thread (one backward must never hold two nodes for one record: each would run
        with part of its gradient)."""
        cache = self.proxies
        if cache is not None:
            ref = cache.get(at)
            if ref is not None:
                node = ref()
                if node is not None:
                    return node
        with self.lock:  # made once, whichever thread asks first
            cache = self.proxies
            if cache is None:
                cache = self.proxies = {}
            ref = cache.get(at)
            node = ref() if ref is not None else None
            if node is None:
                node = _new(NODE_CLASSES[self.record(at)[0]])
                node._tape = self
                node._at = at
                cache[at] = weakref.ref(node)
            return node

    def side(self, table: str, at: int, create: bool = False):
        """Record `at`'s entry in side table `table` (hooks, traces, notes); None if it has none."""
        entries = getattr(self, table)
        if entries is None and not create:
            return None
        if not create:
            return entries.get(at)
        with self.lock:  # two threads adding hooks at once keep both
            entries = getattr(self, table)
            if entries is None:
                entries = {}
                setattr(self, table, entries)
            entry = entries.get(at)
            if entry is None:
                entry = entries[at] = {}
            return entry


_new = object.__new__


# thread id -> the `me` of the tape whose run is open in that thread
_OPEN: dict = {}


def tape_for_leaves() -> "Tape":
    """The tape for a record whose differentiable inputs are all leaves: the thread's open tape
    where it may take more (see JOIN_BYTES), a new one otherwise."""
    me = _OPEN.get(get_ident())
    if me is not None:
        tape = me()
        if tape is not None and not tape.base and tape.bytes < JOIN_BYTES and not tape.full and _lean(tape) and \
                (tape.sources is None or len(tape.sources) <= SOURCES and all(_lean(s) for s in tape.sources)):
            return tape
    return Tape()


def _lean(tape: "Tape") -> bool:
    """Whether backward may read this tape on its lean path, as far as the tape itself tells."""
    return not (tape.special or tape.foreign or tape.hooks)


def close_run(ident: int | None = None) -> None:
    """End the thread's open run (another tape, a node outside tapes or an in-place change
    comes next)."""
    me = _OPEN.pop(get_ident() if ident is None else ident, None)
    if me is not None:
        tape = me()
        if tape is not None:
            tape.open = 0


def close_all_runs() -> None:
    """End every thread's open run: an in-place change, whose time stamps the runs after it."""
    for ident in list(_OPEN):
        close_run(ident)


def next_seq() -> int:
    """A creation number for a node made outside the tapes (a leaf's, a custom Function's)."""
    close_run()
    return next(_blocks) << SHIFT


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
    values = list(_LIVE.values())  # in one step, whatever other threads do to _LIVE
    return min(values) if values else None


versions.OLDEST = _oldest_clock
versions.CLOSE = close_all_runs

# serial -> `me` of each live tape that has swept once (BIG_TAPE bytes of results): swept again
# at every full collection where it has grown since (a `del` of a chain frees what it saved).
_BIG: dict = {}


def _sweep_big_tapes(phase: str, info: dict) -> None:
    if phase != "stop" or info.get("generation") != 2 or not _BIG:
        return
    for me in list(_BIG.values()):
        tape = me()
        if tape is not None and tape.bytes:
            tape.sweep()


gc.callbacks.append(_sweep_big_tapes)
