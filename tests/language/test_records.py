"""language/records.py's @record: dataclasses' classes with shared __repr__, __eq__ and __hash__
(start-up costs no compiling for them); every record must behave as the same @dataclass."""

import dataclasses
from dataclasses import dataclass, field

import pytest

from autodiff._record import record


def _twins(**options):
    """The same class, as a dataclass and as a record."""
    def body():
        return {"__annotations__": {"a": int, "b": list, "c": str, "hidden": object},
                "b": field(default_factory=list), "c": "x", "hidden": field(default=None, repr=False, compare=False)}

    return (dataclass(type("Point", (), body()), **options), record(type("Point", (), body()), **options))


@pytest.mark.parametrize("options", [{}, {"frozen": True}])
def test_a_record_behaves_as_the_dataclass(options):
    theirs, ours = _twins(**options)
    hidden = ("not", "shown")
    for make in (lambda cls: cls(1), lambda cls: cls(2, [3], "y", hidden=hidden)):
        a, b = make(theirs), make(ours)
        assert repr(a) == repr(b)
        assert [f.name for f in dataclasses.fields(a)] == [f.name for f in dataclasses.fields(b)]
        assert dataclasses.asdict(a) == dataclasses.asdict(b)
        assert dataclasses.replace(b, a=9).a == 9 and isinstance(dataclasses.replace(b, a=9), ours)
        assert (make(ours) == b) == (make(theirs) == a) and (b == ours(0)) == (a == theirs(0))
        assert (b == a) is False and b.__eq__(a) is NotImplemented  # another class, even with the same fields
    assert (ours.__hash__ is None) == (theirs.__hash__ is None)
    if options.get("frozen"):
        assert hash(ours(1, (), "z")) == hash(theirs(1, (), "z")) == hash((1, (), "z"))
        with pytest.raises(dataclasses.FrozenInstanceError):
            ours(1).a = 2
    else:
        with pytest.raises(TypeError, match="unhashable"):
            hash(ours(1))


def test_a_record_that_holds_itself_shows_dots():
    @record
    class Node:
        child: object = None

    node = Node()
    node.child = node
    assert repr(node) == "test_a_record_that_holds_itself_shows_dots.<locals>.Node(child=...)"


def test_methods_the_class_defines_are_kept():
    @record
    class Own:
        a: int

        def __repr__(self):
            return "mine"

        def __eq__(self, other):
            return True

        def __hash__(self):
            return 7

    assert (repr(Own(1)), Own(1) == 2, hash(Own(1))) == ("mine", True, 7)


def test_what_a_record_does_not_make_is_refused():
    with pytest.raises(TypeError, match="order"):
        record(order=True)
