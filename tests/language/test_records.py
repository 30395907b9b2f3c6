"""language/records.py's @record: dataclasses' classes with shared __repr__, __eq__ and __hash__
(start-up costs no compiling for them); every record must behave as the same @dataclass."""

import dataclasses
from dataclasses import dataclass, field

import pytest
from threads import run_threads, switching_every_microsecond

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


def _fresh(**options):
    """A record class, and a probe telling whether dataclasses has made it yet."""
    made = []
    original = dataclasses._process_class

    def watched(cls, *args, **kwargs):
        made.append(cls.__name__)
        return original(cls, *args, **kwargs)

    return made, watched


@pytest.mark.parametrize("first_use", ["instance", "fields of the class", "is_dataclass", "subclass", "unpickled"])
def test_a_record_is_made_a_dataclass_on_first_use_and_then_behaves_as_one(first_use, monkeypatch):
    made, watched = _fresh()
    monkeypatch.setattr(dataclasses, "_process_class", watched)

    @record
    class Lazy:
        a: int
        b: list = field(default_factory=list)

    assert made == []  # declared: nothing made yet
    if first_use == "instance":
        assert Lazy(1).b == [] and Lazy(1, [2]) == Lazy(1, [2])
    elif first_use == "fields of the class":
        assert [f.name for f in dataclasses.fields(Lazy)] == ["a", "b"]
    elif first_use == "is_dataclass":
        assert dataclasses.is_dataclass(Lazy)
    elif first_use == "subclass":
        @record
        class Child(Lazy):
            c: str = "x"

        assert repr(Child(1)) == f"{Child.__qualname__}(a=1, b=[], c='x')"
    else:  # as pickle makes an instance: no __init__, its fields put in place
        loose = object.__new__(Lazy)
        loose.__dict__.update(a=1, b=[2])
        assert repr(loose) == f"{Lazy.__qualname__}(a=1, b=[2])" and loose == Lazy(1, [2]) and loose != Lazy(1)
    assert made.count("Lazy") == 1  # made once (a subclass is made around it)
    assert dataclasses.replace(Lazy(1), a=3) == Lazy(3) and dataclasses.asdict(Lazy(1, [2])) == {"a": 1, "b": [2]}
    with pytest.raises(TypeError, match="missing 1 required positional argument: 'a'"):
        Lazy()  # dataclasses' own __init__, its own errors


def test_a_record_with_an_init_of_its_own_keeps_it():
    @record
    class Own:
        a: int

        def __init__(self, a):
            self.a = a * 2

    assert Own(2).a == 4 and dataclasses.fields(Own)[0].name == "a"


def test_a_frozen_record_is_made_at_once(monkeypatch):
    made, watched = _fresh()
    monkeypatch.setattr(dataclasses, "_process_class", watched)

    @record(frozen=True)
    class Fixed:
        a: int

    assert made == ["Fixed"]


def test_two_threads_making_one_record_make_it_once(monkeypatch):
    import threading

    made, watched = _fresh()
    monkeypatch.setattr(dataclasses, "_process_class", watched)

    @record
    class Shared:
        a: int = 0

    start = threading.Barrier(8)
    results = []

    def use():
        start.wait()
        results.append(Shared(1).a)

    run_threads(*[use] * 8)
    assert results == [1] * 8 and made == ["Shared"]


def test_the_grad_command_makes_only_the_records_it_uses():
    """The start of `autodiff grad` makes none of the check report's records (it is not asked for)."""
    import subprocess
    import sys

    script = (
        "import dataclasses, sys\n"
        "made = []\n"
        "original = dataclasses._process_class\n"
        "def watched(cls, *a, **k):\n"
        "    made.append(cls.__name__)\n"
        "    return original(cls, *a, **k)\n"
        "dataclasses._process_class = watched\n"
        "from autodiff.program import differentiate\n"
        "differentiate('y = a * b', at={'a': 2, 'b': 3})\n"
        "print(' '.join(made))\n"
    )
    made = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True).stdout.split()
    assert "Differentiation" in made and not {"CheckEntry", "CheckReport", "Forward", "Recorded"} & set(made)


def test_every_data_class_of_the_package_says_what_it_holds():
    """A dataclass without a docstring gets its signature as one, computed by inspect as the class is
    made (part of a command's start); each of ours says in words what it holds instead."""
    import ast
    import pathlib

    import autodiff

    missing = []
    for path in pathlib.Path(autodiff.__file__).parent.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef) and ast.get_docstring(node) is None and any(
                    ast.unparse(d).split("(")[0] in ("record", "dataclass", "dataclasses.dataclass")
                    for d in node.decorator_list):
                missing.append(f"{path.name}: {node.name}")
    assert missing == []


def test_threads_never_see_a_record_half_made():
    """While one thread makes a record a dataclass, others that call it or read its fields find
    either the stand-ins (and wait) or the dataclass: never a class without its __init__ or fields."""
    import threading

    with switching_every_microsecond():
        for _ in range(40):
            @record
            class Shared:
                """A record made by whichever thread comes first."""

                a: int
                b: list = field(default_factory=list)

            start = threading.Barrier(4)

            def use(record_class=Shared, start=start):
                start.wait()
                for _ in range(50):
                    assert record_class(1).a == 1 and [f.name for f in dataclasses.fields(record_class)] == ["a", "b"]

            run_threads(*[use] * 4)  # the first thread's failure, raised here


def test_a_declaration_dataclasses_refuses_is_refused_at_every_use():
    @record
    class Bad:
        """A mutable default, which dataclasses refuses."""

        a: list = []  # noqa: RUF012 - the point of the test

    for use in (lambda: Bad(), lambda: dataclasses.fields(Bad), lambda: Bad()):
        with pytest.raises(ValueError, match="mutable default"):
            use()


def test_before_its_first_use_a_record_matches_and_shows_its_signature_as_a_dataclass():
    import inspect

    @record
    class Pair:
        """Two numbers."""

        x: int
        y: int = 0

    parameters = inspect.signature(Pair).parameters  # dataclasses' __init__, not the stand-in's (*args, **kwargs)
    assert list(parameters) == ["x", "y"] and parameters["y"].default == 0

    @record
    class Point:
        """Two coordinates."""

        x: int
        y: int

    loose = object.__new__(Point)  # as unpickling makes one: no __init__ has run
    loose.__dict__.update(x=1, y=2)
    match loose:
        case Point(a, b):
            assert (a, b) == (1, 2)
        case _:
            raise AssertionError("not matched")


def test_every_record_of_the_package_is_a_dataclass_dataclasses_accepts():
    """Records are made on first use, so a declaration dataclasses refuses would pass import:
    every module is imported here, and every record made."""
    import importlib
    import pkgutil

    import autodiff
    from autodiff import _record

    for module in pkgutil.walk_packages(autodiff.__path__, "autodiff."):
        if module.name.endswith("__main__"):  # the command line itself, which runs as it is imported
            continue
        try:
            importlib.import_module(module.name)
        except ImportError:  # an optional extra not installed (CuPy, matplotlib...)
            continue
    ours = [cls for cls in _record.ON_FIRST_USE if cls.__module__.startswith("autodiff.")]  # not the tests' own
    assert len(ours) > 20
    for cls in ours:
        assert dataclasses.is_dataclass(cls) and dataclasses.fields(cls) is not None, cls
