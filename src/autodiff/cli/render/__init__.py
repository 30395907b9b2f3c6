"""Renderers: reports in, text out. Rich for people, plain and JSON for scripts, DOT, Mermaid and
SVG for graphs, LaTeX and Markdown for documents, a page of HTML to click through.

`RENDERERS` is the one table of them: for each kind of result, its formats and the function
that writes each ("module:function" in this package, imported only when that format is asked
for, so that a plain run never loads Rich). Rich renderers draw on a console; the others
return text, or bytes for a picture. Each command's `--format` choices are made from it
(`format_choices`), with `auto` first: rich on a terminal, plain otherwise.
"""

from __future__ import annotations

import importlib
from enum import Enum

RENDERERS = {
    "grad": {"rich": "rich_:grad", "plain": "plain:grad", "json": "json_:grad"},
    "evaluation": {"rich": "rich_:evaluation", "plain": "plain:evaluation", "json": "json_:evaluation"},
    "graph": {"rich": "rich_:graph", "plain": "plain:graph", "json": "json_:graph", "dot": "diagrams:dot",
              "mermaid": "diagrams:mermaid", "svg": "diagrams:svg", "png": "diagrams:png", "pdf": "diagrams:pdf",
              "html": None},
    # None: a format the command makes another way. explain --format svg draws the graph of the
    # same run, each edge labelled: the command records it and renders it as "graph" (commands/explain.py).
    # --format html, of explain and of graph, is the page (program/page/) of the run: rendered as "page".
    "explanation": {"rich": "explain:rich", "plain": "explain:plain", "json": "explain:json_",
                    "markdown": "explain:markdown", "latex": "explain:latex", "svg": None, "html": None},
    "derivation": {"rich": "derive:rich", "plain": "derive:plain", "json": "derive:json_", "latex": "derive:latex",
                   "markdown": "derive:markdown", "expr": "derive:expr", "python": "derive:python"},
    # derive --steps: the derivation rule by rule (program/steps.py)
    "steps": {"rich": "steps:rich", "plain": "steps:plain", "json": "steps:json_", "latex": "steps:latex",
              "markdown": "steps:markdown"},
    "plot": {"rich": "plot:rich", "plain": "plot:plain", "json": "plot:json_", "svg": "plot:svg"},
    "suite": {"rich": "suite:rich", "plain": "suite:plain", "json": "suite:json_"},
    "page": {"html": "page:html"},
}


def renderer(kind: str, fmt: str):
    """The function that writes a `kind` of result in format `fmt`."""
    module, function = RENDERERS[kind][fmt].split(":")
    return getattr(importlib.import_module(f"{__name__}.{module}"), function)


def format_choices(kind: str, name: str) -> type:
    """The `--format` choices of a command, as the Enum Typer wants: auto, then the table's formats."""
    return Enum(name, {fmt: fmt for fmt in ("auto", *RENDERERS[kind])}, type=str)


def emit(kind: str, report, chosen, *, warnings: bool = True) -> None:
    """Write a result in the format chosen (an Enum member or its value); its warnings go to
    standard error first (`warnings=False`: the command said them already)."""
    from ..console import chosen_format, say_warnings, show

    if warnings:
        say_warnings(getattr(report, "warnings", ()))
    fmt = chosen_format(getattr(chosen, "value", chosen))
    show(fmt, lambda console: renderer(kind, "rich")(report, console), lambda f: renderer(kind, f)(report))
