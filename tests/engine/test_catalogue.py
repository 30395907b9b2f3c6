"""The op modules that load on first use (ops/catalogue.py): start-up loads none of them, a name's
first use loads its module, a whole table read loads them all, and the table of which module
declares what is what tools/catalogue.py writes."""

import json
import subprocess
import sys

import pytest
from console import ROOT

import autodiff
from autodiff import linalg, ops
from autodiff.language import builtins
from autodiff.nn import functional
from autodiff.ops import catalogue, declared_in

LAZY = [f"autodiff.ops.{module}" for module in catalogue.LAZY]


def _fresh(code: str):
    """What `code` prints as JSON, run in a Python of its own (the op modules loaded are its own)."""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.splitlines()[-1])


def test_the_table_is_what_the_tool_writes():
    done = subprocess.run([sys.executable, "tools/catalogue.py"], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert done.returncode == 0, done.stderr
    assert (ROOT / "src" / "autodiff" / "ops" / "declared_in.py").read_text() == done.stdout, \
        "run python tools/catalogue.py --write"


def test_a_program_of_operators_and_log_loads_no_lazy_op_module():
    loaded = _fresh(
        "import io, json, sys, contextlib\n"
        "from autodiff.cli.main import main\n"
        "sys.argv = ['autodiff', 'grad', 'examples/tutorial.expr', '--at', 'a=2,b=3,c=5,d=10', '--format', 'json']\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    try:\n        main()\n    except SystemExit as done:\n        assert not done.code, done.code\n"
        "print(json.dumps(sorted(m for m in sys.modules if m.startswith('autodiff.'))))")
    assert not set(LAZY) & set(loaded)
    assert "autodiff.nn" not in loaded and "autodiff.linalg" not in loaded


@pytest.mark.parametrize("use, module", [
    ("autodiff.sum(autodiff.ones(2))", "reduction"),  # a function of the package
    ("autodiff.ones(2, 2).cumsum(0)", "reduction"),  # a Tensor method
    ("autodiff.ops.REGISTRY['erfinv']", "special"),  # an op of the registry
    ("autodiff.ones(2).logcumsumexp(0)", "statistics"),
    ("autodiff.nn.functional.gelu(autodiff.ones(2))", "activation"),
    ("__import__('autodiff.language', fromlist=['x']).run('y = sum(x)', at={'x': [1.0, 2.0]})", "reduction"),
])
def test_the_first_use_of_a_name_loads_its_module(use, module):
    loaded = _fresh(f"import json, sys, autodiff\nbefore = set(sys.modules)\n{use}\n"
                    "print(json.dumps(sorted(set(sys.modules) - before)))")
    assert f"autodiff.ops.{module}" in loaded


@pytest.mark.parametrize("read", ["list(autodiff.ops.PUBLIC)", "len(autodiff.ops.REGISTRY)",
                                  "autodiff.ops.spelling.SPELLINGS.items()", "dict(autodiff.ops.surface.METHOD_FORMS)"])
def test_reading_a_whole_table_loads_every_op_module(read):
    loaded = _fresh(f"import json, sys, autodiff, autodiff.ops.spelling\n{read}\nprint(json.dumps(sorted(sys.modules)))")
    assert set(LAZY) <= set(loaded)


def test_every_name_the_table_gives_is_declared_by_its_modules_and_every_public_function_is_listed():
    ops.load_all()
    tables = (ops.PUBLIC, ops.REGISTRY, ops.registry.NONDIFF, ops.surface.METHOD_FORMS, ops.spelling.SPELLINGS)
    for name in declared_in.DECLARED_IN:
        assert any(table.declared(name) for table in tables) or hasattr(autodiff.Tensor, name), name
    assert set(declared_in.PUBLIC_NAMES) == set(ops.PUBLIC) and len(declared_in.PUBLIC_NAMES) == len(ops.PUBLIC)
    assert set(dir(autodiff)) >= set(declared_in.PUBLIC_NAMES)


def test_an_unknown_name_is_an_error_as_before():
    with pytest.raises(AttributeError, match="has no attribute 'not_an_op'"):
        autodiff.ones(2).not_an_op
    with pytest.raises(AttributeError, match="module 'autodiff' has no attribute 'not_an_op'"):
        autodiff.not_an_op
    assert "not_an_op" not in ops.PUBLIC and ops.PUBLIC.get("not_an_op") is None
    with pytest.raises(KeyError):
        ops.REGISTRY["not_an_op"]


def test_the_languages_lists_of_names_are_nn_functionals_and_linalgs():
    assert tuple(builtins.ACTIVATIONS) == functional.ACTIVATIONS
    assert tuple(builtins.LINALG) == tuple(f"linalg_{name}" for name in linalg.FUNCTIONS)
    assert builtins.FUNCTIONS["linalg_det"] is linalg.det and builtins.FUNCTIONS["gelu"] is functional.gelu


def test_a_lazy_table_finds_each_value_once_and_knows_its_names_without_finding():
    found = []
    table = catalogue.LazyTable(("a", "b"), lambda name: found.append(name) or name * 2)
    assert "a" in table and "c" not in table and len(table) == 2 and found == []
    assert table["a"] == table["a"] == "aa" and found == ["a"]
    assert table.get("c") is None and list(table.items()) == [("a", "aa"), ("b", "bb")]
    with pytest.raises(KeyError):
        table["c"]


def test_an_op_apply_the_registry_does_not_hold_is_an_error_never_a_plain_function(restore_op_tables):
    from autodiff.ops.registry import REGISTRY, defop
    from autodiff.symbolic.trace import Tracer

    def stray(input):  # an op's apply the registry does not hold under its name
        return input * 2

    stray._op_name = "stray_for_test"
    impostor = defop("impostor_for_test", lambda xp, input: input * 3, input=lambda grad: 3 * grad).apply
    impostor._op_name = "mul"  # the registry's mul is another function
    with Tracer() as tracer:
        x = tracer.input("x", autodiff.ones(2))
        for apply, name in ((stray, "stray_for_test"), (impostor, "mul")):
            with pytest.raises(RuntimeError, match=f"the operation '{name}' is not in the op registry"):
                hooks_apply(apply, x)
        late = defop("late_for_test", lambda xp, input: input * 2, input=lambda grad: 2 * grad)
        assert late.apply(x).expr is not None and REGISTRY["late_for_test"] is late  # declared late, still traced
        assert (x * 2).expr is not None


def hooks_apply(apply, x):
    """Hand `apply` to the running trace as an op's apply hands itself (dispatch does this)."""
    from autodiff.symbolic.trace import Tracer

    return Tracer.active._apply(apply, (x,), {})


def test_a_trace_loads_only_the_op_modules_its_program_uses():
    loaded = _fresh(
        "import json, sys\n"
        "from autodiff.program import derive\n"
        "derive.derive('y = a * b + tanh(a)')\n"
        "print(json.dumps(sorted(m for m in sys.modules if m.startswith('autodiff.ops.'))))")
    assert "autodiff.ops.spectral" not in loaded and "autodiff.ops.decompositions" not in loaded, loaded


def test_a_lazy_method_stands_in_on_the_class_and_tensor_has_no_getattr():
    """A class with __getattr__ loses CPython's specialised attribute look-ups on every instance (the
    0-d chain ran 15% slower): lazy methods stand on the class until their module loads."""
    from autodiff.tensor import TensorMethods

    assert not any("__getattr__" in vars(cls) for cls in autodiff.Tensor.__mro__ if cls is not object)
    assert set(declared_in.METHODS) <= set(vars(TensorMethods))
    x = autodiff.ones(2, 2)
    assert x.cumsum(0).tolist() == [[1.0, 1.0], [2.0, 2.0]]
    assert not isinstance(vars(TensorMethods)["cumsum"], catalogue._StandIn)  # the module's own, once loaded
