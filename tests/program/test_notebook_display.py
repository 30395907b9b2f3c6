"""What a notebook shows: each result's _repr_html_ / _repr_svg_, and the %%autodiff magic."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest

import autodiff
from autodiff.program import differentiate, record
from autodiff.program.explain import explain

TUTORIAL = "u = a * b\nt = log(d)\ne = u + t * c\n"
AT = {"a": 2.0, "b": 3.0, "c": 5.0, "d": 10.0}


def test_a_tensor_shows_its_value_node_and_gradient_escaped():
    a = autodiff.tensor([1.0, 2.0], requires_grad=True)
    y = (a * a).sum()
    y.backward()
    assert "tensor(5., grad_fn=&lt;SumBackward0&gt;)" in y._repr_html_()
    html = a._repr_html_()
    assert "shape [2]" in html and "leaf, requires grad" in html and "grad: tensor([2., 4.])" in html


def test_a_grad_report_is_a_table_with_its_graph():
    run = differentiate(TUTORIAL, AT, graph=True)
    html = run._repr_html_()
    assert "<table" in html and "<td" in html and "17.5129" in html and "<svg" in html and "<?xml" not in html
    assert html.count("<tr>") == 1 + 1 + 4 + 2  # the head, the output, the inputs, the variables u and t
    text = []
    run._repr_pretty_(type("P", (), {"text": lambda self, t: text.append(t)})(), False)
    assert text == ["e = 17.5129\n∂e/∂a = 3\n∂e/∂b = 2\n∂e/∂c = 2.30259\n∂e/∂d = 0.5"]


def test_explanations_and_graphs():
    assert "∂e/∂d = 0.5" in explain(TUTORIAL, AT, wrt=["d"])._repr_html_()
    svg = record(TUTORIAL, AT, backward=True, edge_labels=True)._repr_svg_()
    assert ET.fromstring(svg.encode()).get("class") == "autodiff-picture autodiff-graph"


def test_the_cell_magic():
    jupyter = pytest.importorskip("autodiff.jupyter", exc_type=ImportError)
    assert isinstance(jupyter.run_cell("--at a=2,b=3,c=5,d=10", TUTORIAL), type(differentiate(TUTORIAL, AT)))
    assert jupyter.run_cell("--at a=2,b=3,c=5,d=10 --tree", TUTORIAL).graph is not None
    assert jupyter.run_cell("--at a=2,b=3,c=5,d=10 --explain --wrt d", TUTORIAL).inputs["d"].grad == 0.5
    graph = jupyter.run_cell("--at a=2,b=3,c=5,d=10 --graph", TUTORIAL).graph
    assert len(graph.edge_labels) == len(graph.edges) == 7
    from autodiff.program.errors import UsageProblem

    with pytest.raises(UsageProblem, match="%%autodiff --tree --graph"):
        jupyter.run_cell("--tree --graph", TUTORIAL)

    registered = []
    autodiff.load_ipython_extension(type("Shell", (), {"register_magics": lambda self, m: registered.append(m)})())
    assert registered == [jupyter.AutodiffMagics]


def _magic(line: str, cell: str):
    """The %%autodiff magic as IPython calls it; the UsageError IPython shows, as its text."""
    jupyter = pytest.importorskip("autodiff.jupyter", exc_type=ImportError)
    from IPython.core.error import UsageError

    try:
        return jupyter.AutodiffMagics(shell=None).autodiff(line, cell)
    except UsageError as error:
        return str(error)


def test_a_cells_grads_hold_every_gradient_its_table_shows():
    """--retain u shows u's gradient in the table: `_.grads` has it too, after the inputs'."""
    result = _magic("--at a=2,b=3 --retain u", "u = a * b\ne = u * 2")
    assert {name: float(g) for name, g in result.grads.items()} == {"a": 6.0, "b": 4.0, "u": 2.0}
    assert list(result.grads) == ["a", "b", "u"]
    assert "u" in result._repr_html_() and [q.name for q in result.retained] == ["u"]
    assert list(_magic("--at a=2,b=3", "u = a * b\ne = u * 2").grads) == ["a", "b"]
    assert set(differentiate("u = a * b\ne = u * 2", {"a": 2, "b": 3}, retain=["u"]).grads) == {"a", "b"}  # the API's own


def test_a_cells_errors_are_the_command_lines_with_their_hint():
    text = _magic("--at x=[1,2]", "y = x * 2")
    assert text == ("grad can be implicitly created only for scalar outputs\nhint: the output y has shape [2]: "
                    "differentiate a number, as sum(y), or give --grad-output ones")


@pytest.mark.parametrize("line,complaint", [("--bogus", "unrecognized arguments: --bogus"),
                                            ("--at", "argument --at: expected one argument"),
                                            ('--at "x=1', "No closing quotation")])
def test_a_cells_bad_options_are_one_usage_message(line, complaint, capsys):
    text = _magic(line, "x * 2")
    assert text == (f"%%autodiff {line}: {complaint}; the options: --at NAME=VALUE,... --wrt a,b --output NAME "
                    "--grad-output ones|VALUE --retain NAMES --order 1|2 --check --eps STEP and one of --tree, --explain, "
                    "--graph")
    assert capsys.readouterr() == ("", "")  # no usage printed by argparse, no exit status in the message


def test_a_cells_text_is_the_grad_table_and_order_2_adds_the_hessian():
    """Where a front end shows no HTML (a terminal IPython, nbconvert to text), a cell shows what
    `autodiff grad` shows at a terminal, not a dump of the object."""
    jupyter = pytest.importorskip("autodiff.jupyter", exc_type=ImportError)
    from IPython.core.formatters import PlainTextFormatter
    from console import run_autodiff

    cell = "z = x ** 3 * y\n"
    run = jupyter.run_cell("--at x=2,y=3 --order 2", cell, name="cell.expr")
    assert run.hessian[("x", "y")] == 3 * 2 ** 2 and run.hessian[("x", "x")] == 6 * 2 * 3
    text = PlainTextFormatter()(run)
    assert not text.startswith("CellRun(") and "Hessian: ∂²z / ∂row ∂column" in text
    shown = run_autodiff("grad", "-e", cell, "--at", "x=2,y=3", "--order", "2", "--format", "rich")
    assert text == shown.stdout.rstrip("\n").replace("(<expr>)", "(cell.expr)")
    assert "--order" in jupyter.OPTIONS
