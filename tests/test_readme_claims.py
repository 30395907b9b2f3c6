"""The README's "What autodiff claims" is true to the code: every name it lists exists where it
says (the language's catalogue, autodiff, autodiff.linalg, nn.functional, forward mode, the
graph API), and every function of the language is listed there. That the functions agree with
PyTorch is the registry-driven tests' work (tests/engine); this test keeps the list honest."""

import pathlib
import re

import pytest

import autodiff
import autodiff.nn.functional as F
from autodiff.autograd import forward_ad, functional
from autodiff.autograd.function import FunctionCtx
from autodiff.language.builtins import FUNCTIONS

README = pathlib.Path(__file__).resolve().parents[1] / "README.md"
NAME = re.compile(r"[A-Za-z_][A-Za-z_0-9.]*$")


def _claims() -> dict:
    """{bullet title: [the backticked spans of that bullet]}."""
    text = README.read_text()
    section = text[text.index("## What autodiff claims"):]
    section = section[:section.index("\n## ", 1)]
    bullets = re.split(r"\n- \*\*", section)[1:]
    assert len(bullets) >= 10, "the claims are a list of bullets, each with a bold title"
    return {b[:b.index("**")]: re.findall(r"`([^`]+)`", b) for b in bullets}


def _names(spans) -> list:
    """The identifiers of the spans (dotted ones, as `autograd.forward_ad`, too)."""
    return [word for span in spans for word in span.split() if NAME.match(word)]


def _functions(spans) -> list:
    """The plain names of the spans: not a module's dotted name (`torch.linalg`)."""
    return [word for word in _names(spans) if "." not in word]


LANGUAGE_AND_TOP_LEVEL = ["Creating tensors", "Arithmetic", "Elementwise", "Special functions",
                          "Shape and indexing", "Reductions and statistics", "Comparison and logic", "Other names"]


@pytest.mark.parametrize("title", LANGUAGE_AND_TOP_LEVEL)
def test_each_function_claimed_is_in_the_language_and_the_python_api(title):
    names = _functions(_claims()[title])
    assert names
    assert not [n for n in names if n not in FUNCTIONS], "not callable in the language"
    assert not [n for n in names if not hasattr(autodiff, n)], "not in autodiff"


def test_activations_and_losses_are_in_the_language_and_nn_functional():
    names = _functions(_claims()["Activations and losses"])
    assert "gelu" in names and "cross_entropy" in names
    assert not [n for n in names if n not in FUNCTIONS or not hasattr(F, n)]


def test_linear_algebra_is_there_under_both_spellings():
    spans = _claims()["Linear algebra"]
    top, linalg = spans[0], spans[spans.index("torch.linalg") + 1]
    assert not [n for n in top.split() if n not in FUNCTIONS or not hasattr(autodiff, n)]
    assert not [n for n in linalg.split() if f"linalg_{n}" not in FUNCTIONS or not hasattr(autodiff.linalg, n)]


# Where the names of the forward mode and graph API bullets are looked for, by their first part or whole.
ROOTS = {"autograd": autodiff.autograd, "func": autodiff.func, "Function": autodiff.autograd.Function,
         "ctx": FunctionCtx}
SEARCHED = (autodiff, autodiff.autograd, autodiff.Tensor, autodiff.autograd.Function, FunctionCtx, forward_ad,
            functional, autodiff.func)


def _resolve(dotted: str):
    head, *rest = dotted.split(".")
    ways = ([(ROOTS[head], rest)] if head in ROOTS else []) + [(root, [head, *rest]) for root in SEARCHED]
    for found, path in ways:
        for part in path:
            found = getattr(found, part, None)
        if found is not None:
            return found
    return None


@pytest.mark.parametrize("title", ["Forward mode", "The graph API"])
def test_forward_mode_and_the_graph_api_claimed_exist(title):
    spans = [span for span in _claims()[title] if not span.startswith("autodiff ")]  # a command line, not a name
    names = _names(spans)
    assert len(names) >= 8
    assert not [n for n in names if _resolve(n) is None]


def test_every_function_of_the_language_is_claimed():
    claimed = set(_names(span for spans in _claims().values() for span in spans))
    unlisted = [n for n in FUNCTIONS if n not in claimed and not (n.startswith("linalg_") and n[7:] in claimed)]
    assert not sorted(unlisted), "add them to the README's claims"
