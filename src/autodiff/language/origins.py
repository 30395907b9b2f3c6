"""Where each recorded operation of a program came from: its node -> the syntax node that made it.

Kept by where the operation's record lies (its tape and index; the node itself where an
operation made a node object), so evaluating a program makes no node objects: a record's node
is made only when a reader asks for it (explain, the graph, --check), and the same record gives
the same entry however often its node is made again."""

from __future__ import annotations

from ..autograd.tape import Tape


class Origins:
    """grad_fn -> syntax node, as a mapping that is filled by tensor (the first maker wins)."""

    __slots__ = ("_by_place",)

    def __init__(self) -> None:
        self._by_place: dict = {}

    def note(self, tensor, syntax) -> None:
        """`syntax` made `tensor`, unless an earlier node made its operation."""
        node = tensor._node
        if node is not None:
            self._by_place.setdefault((node, tensor._at) if node.__class__ is Tape else node, syntax)

    def get(self, fn, default=None):
        return self._by_place.get(_place(fn), default)

    def __getitem__(self, fn):
        return self._by_place[_place(fn)]

    def __contains__(self, fn) -> bool:
        return _place(fn) in self._by_place

    def __len__(self) -> int:
        return len(self._by_place)

    def items(self):
        """(grad_fn, syntax node) pairs, in the order the operations ran."""
        for place, syntax in list(self._by_place.items()):
            yield (place[0].proxy(place[1]) if place.__class__ is tuple else place), syntax


def _place(fn):
    tape = getattr(fn, "_tape", None)
    return (tape, fn._at) if tape.__class__ is Tape else fn
