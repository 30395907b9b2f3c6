"""One declaration gives an op its whole public surface (ops/surface.py, ops/registry.py)."""

import ast
import pathlib

import pytest

import autodiff
from autodiff import ops
from autodiff.language.builtins import FUNCTIONS as LANGUAGE_FUNCTIONS
from autodiff.ops import surface
from autodiff.ops.registry import REGISTRY, backward_name, defop

SOURCE = pathlib.Path(autodiff.__file__).parent


@pytest.fixture
def declared(restore_op_tables):
    """Declare ops for one test; they are gone after it."""
    return defop


def test_one_declaration_gives_function_method_inplace_and_node_name(declared):
    cube = declared(
        "cube_for_test", lambda xp, input: input**3, doc="input ** 3", method=True, inplace=True,
        input=lambda grad, input: grad * 3 * input * input,
    )
    function = surface.PUBLIC["cube_for_test"]
    assert function.__doc__ == "input ** 3" and function.__name__ == "cube_for_test"
    x = autodiff.tensor([1.0, 2.0], requires_grad=True)
    y = x.cube_for_test()
    assert type(y.grad_fn).__name__ == "CubeForTestBackward0" and y.grad_fn is not None
    y.sum().backward()
    assert x.grad.tolist() == [3.0, 12.0]
    z = autodiff.tensor([2.0])
    assert z.cube_for_test_() is z and z.tolist() == [8.0] and z._version == 1
    assert cube.apply is function


def test_an_op_with_parameters_takes_them_by_keyword_too():
    x = autodiff.tensor([[1.0, 2.0], [3.0, 4.0]])
    assert autodiff.cumsum(x, dim=0).tolist() == autodiff.cumsum(x, 0).tolist() == [[1.0, 2.0], [4.0, 6.0]]
    assert x.cumsum(dim=1).tolist() == [[1.0, 3.0], [3.0, 7.0]]


def test_operators_and_aliases_are_declared_with_the_op(declared):
    declared("twice_for_test", lambda xp, input, other: 2 * input + other, operators=("__lshift__",),
             input=lambda grad: 2 * grad, other=lambda grad: grad)
    x = autodiff.tensor(1.0, requires_grad=True)
    assert (x << 3).item() == 5.0 and "twice_for_test" not in surface.PUBLIC  # no doc: not public
    assert autodiff.clip is autodiff.clamp and autodiff.Tensor.clip is autodiff.Tensor.clamp
    assert autodiff.absolute is autodiff.abs and autodiff.concat is autodiff.cat


@pytest.mark.parametrize("op, node", [
    ("exp", "ExpBackward0"), ("log1p", "Log1PBackward0"), ("expm1", "Expm1Backward0"),
    ("log_softmax", "LogSoftmaxBackward0"), ("logsumexp", "LogsumexpBackward0"), ("t", "TBackward0"),
    ("unsafe_view", "UnsafeViewBackward0"), ("select_backward", "SelectBackwardBackward0"),
])
def test_node_names_follow_pytorchs_rule(op, node):
    assert backward_name(op) == node
    assert REGISTRY[op].grad_fn_name == node


def test_every_public_function_is_exported_documented_and_callable_in_the_language():
    for name, function in surface.PUBLIC.items():
        assert getattr(autodiff, name) is function, name
        assert getattr(ops, name) is function, name
        assert LANGUAGE_FUNCTIONS[name] is function, name
        assert (function.__doc__ or "").strip(), f"{name} has no docstring"


def test_tensor_py_names_no_operation_and_shadows_no_builtin():
    tree = ast.parse((SOURCE / "tensor.py").read_text())
    imported = [
        (node.module, alias.name)
        for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)
        for alias in node.names
    ]
    assert not [i for i in imported if i[0] and i[0].startswith("ops")]  # the ops bind onto its TensorMethods
    top_level = {target.id for node in tree.body if isinstance(node, ast.Assign) for target in node.targets
                 if isinstance(target, ast.Name)}
    top_level |= {alias.asname or alias.name for node in tree.body if isinstance(node, ast.ImportFrom)
                  for alias in node.names}
    assert not top_level & {"sum", "max", "min", "abs", "all", "any", "pow"}


def test_the_architecture_shows_cumsum_as_it_is_declared():
    """ARCHITECTURE.md's example of adding an op is the real code, entry and sample."""
    text = (SOURCE.parents[1] / "ARCHITECTURE.md").read_text()
    start = text.index("## How the engine works")
    section = text[start:text.index("\n## ", start + 1)]
    blocks = [block for block in section.split("```python")[1:]]
    assert len(blocks) == 2
    entry, sample = (_dedent(block.split("```")[0]) for block in blocks)
    assert entry in (SOURCE / "ops" / "reduction.py").read_text()
    assert sample in (SOURCE.parents[1] / "tests" / "engine" / "op_samples.py").read_text()


def _dedent(text: str) -> str:
    import textwrap

    return textwrap.dedent(text).strip("\n")
