"""examples/autodiff.ipynb runs top to bottom in a fresh kernel, and shows rich output.

Needs the `[notebook]` extra (nbclient, nbformat, ipykernel; `[test]` includes it): without
them the test is skipped. The kernel is ipykernel's own `python3`, run by this Python (so it
imports this checkout's autodiff): nothing has to be installed with `ipykernel install`."""

from __future__ import annotations

import os
import pathlib

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")
pytest.importorskip("ipykernel")

ROOT = pathlib.Path(__file__).resolve().parents[1]
NOTEBOOK = ROOT / "examples" / "autodiff.ipynb"


def test_the_example_notebook_runs_and_shows_pictures(monkeypatch):
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(p for p in [str(ROOT / "src"), os.environ.get("PYTHONPATH")] if p))
    notebook = nbformat.read(NOTEBOOK, as_version=4)
    assert all(not cell.get("outputs") for cell in notebook.cells if cell.cell_type == "code"), \
        "the notebook is kept without outputs"
    client = nbclient.NotebookClient(notebook, kernel_name="python3", timeout=120,
                                     resources={"metadata": {"path": str(NOTEBOOK.parent)}})
    client.execute()  # raises CellExecutionError on any failing cell
    shown = {}
    for cell in notebook.cells:
        if cell.cell_type == "code":
            outputs = [o for o in cell.outputs if o.output_type == "execute_result"]
            assert all(o.output_type != "error" for o in cell.outputs)
            shown[cell.source.splitlines()[0]] = outputs[0].data if outputs else {}
    tutorial = "%%autodiff --at a=2,b=3,c=5,d=10"
    assert "<table" in shown[tutorial]["text/html"] and "17.5129" in shown[tutorial]["text/html"]
    assert "<svg" in shown[tutorial + " --tree"]["text/html"]
    assert "∂e/∂d = 0.5" in shown[tutorial + " --explain --wrt d"]["text/html"]
    assert "∂t/∂d = 1 / d = 0.1" in shown[tutorial + " --graph"]["image/svg+xml"]
    assert "grad_fn AddBackward0" in shown["import autodiff"]["text/html"]
    assert "autodiff-plot" in shown["from autodiff.program.plot import sample"]["image/svg+xml"]



CELL = "x: input = [1, 2, 3]\ny = x * x\n"  # examples/nonscalar.expr: a vector output
GRAD_OF_X = {  # where each kind of cell result keeps x's gradient
    "": lambda result: result.inputs[0].grad,
    " --tree": lambda result: result.inputs[0].grad,
    " --explain": lambda result: result.inputs["x"].grad,
    " --graph": lambda result: next(node.grad for node in result.graph.nodes if node.name == "x"),
}


@pytest.mark.parametrize("shown", list(GRAD_OF_X))
def test_the_magic_starts_backward_from_grad_output(shown):
    """A non-scalar output in a cell, as `autodiff grad --grad-output` takes it (the first tutorial)."""
    from autodiff.jupyter import run_cell

    result = run_cell("--grad-output [1,10,100]" + shown, CELL)
    assert GRAD_OF_X[shown](result).tolist() == [2 * x * g for x, g in zip([1, 2, 3], [1, 10, 100])]
