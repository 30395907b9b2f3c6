"""`repr(tensor)` as PyTorch prints it: `tensor(17.5129, grad_fn=<AddBackward0>)`.

The same rules: 4 decimals; scientific notation when the magnitudes span more than 1000x,
exceed 1e8 or go below 1e-4; whole numbers as `2.`; 80 columns; tensors of more than 1000
elements summarised with `...`. Recursion here is over dimensions only, never elements.
"""

from __future__ import annotations

import math

import numpy as np

from . import backend, dtypes


class PrintOptions:
    """The options set_printoptions changes (PyTorch's defaults)."""

    __slots__ = ("precision", "threshold", "edgeitems", "linewidth", "sci_mode")

    def __init__(self) -> None:
        self.precision = 4
        self.threshold = 1000
        self.edgeitems = 3
        self.linewidth = 80
        self.sci_mode = None


OPTIONS = PrintOptions()


def set_printoptions(precision=None, threshold=None, edgeitems=None, linewidth=None, profile=None, sci_mode=None):
    """Change how tensors print (PyTorch's options and profiles: default, short, full)."""
    if profile == "default":
        OPTIONS.__init__()
    elif profile == "short":
        OPTIONS.precision, OPTIONS.threshold, OPTIONS.edgeitems, OPTIONS.linewidth = 2, 1000, 2, 80
    elif profile == "full":
        OPTIONS.precision, OPTIONS.threshold, OPTIONS.edgeitems, OPTIONS.linewidth = 4, math.inf, 3, 80
    for name, value in (("precision", precision), ("threshold", threshold), ("edgeitems", edgeitems), ("linewidth", linewidth)):
        if value is not None:
            setattr(OPTIONS, name, value)
    OPTIONS.sci_mode = sci_mode


class _Formatter:
    """Decides one width and notation for every element of a tensor."""

    def __init__(self, values: np.ndarray, floating: bool) -> None:
        self.floating = floating
        self.int_mode = True
        self.sci_mode = False
        self.max_width = 1
        if not floating:
            for value in values.tolist():
                self.max_width = max(self.max_width, len(str(value)))
            return
        finite = values[np.isfinite(values) & (values != 0)].astype(np.float64)
        if finite.size == 0:
            return
        magnitudes = np.abs(finite)
        low, high = float(magnitudes.min()), float(magnitudes.max())
        self.int_mode = bool(np.all(finite == np.ceil(finite)))
        if OPTIONS.sci_mode is None:
            self.sci_mode = high / low > 1000.0 or high > 1.0e8 or low < 1.0e-4
        else:
            self.sci_mode = OPTIONS.sci_mode
        p = OPTIONS.precision
        for value in finite.tolist():
            if self.sci_mode:
                text = f"{value:.{p}e}"
            elif self.int_mode:
                text = f"{value:.0f}" + " "  # room for the trailing "."
            else:
                text = f"{value:.{p}f}"
            self.max_width = max(self.max_width, len(text))

    def format(self, value) -> str:
        if self.floating:
            p = OPTIONS.precision
            if self.sci_mode:
                text = f"{value:{self.max_width}.{p}e}"
            elif self.int_mode:
                text = f"{value:.0f}"
                if not (math.isinf(value) or math.isnan(value)):
                    text += "."
            else:
                text = f"{value:.{p}f}"
        else:
            text = str(value)
        return " " * (self.max_width - len(text)) + text


def _summarized(values: np.ndarray) -> np.ndarray:
    """Only the elements that will be shown, for choosing the format."""
    edge = OPTIONS.edgeitems
    if values.ndim == 0:
        return values.reshape(1)
    if values.shape[0] > 2 * edge:
        values = np.concatenate([values[:edge], values[-edge:]])
    if values.ndim == 1:
        return values
    return np.concatenate([_summarized(row) for row in values]) if len(values) else values.reshape(-1)


def _vector(values: np.ndarray, indent: int, summarize: bool, fmt: _Formatter) -> str:
    per_line = max(1, math.floor((OPTIONS.linewidth - indent) / (fmt.max_width + 2)))
    edge = OPTIONS.edgeitems
    if summarize and values.shape[0] > 2 * edge:
        items = [fmt.format(v) for v in values[:edge].tolist()] + [" ..."]
        items += [fmt.format(v) for v in values[-edge:].tolist()]
    else:
        items = [fmt.format(v) for v in values.tolist()]
    lines = [", ".join(items[i : i + per_line]) for i in range(0, len(items), per_line)]
    return "[" + ("," + "\n" + " " * (indent + 1)).join(lines) + "]"


def _nested(values: np.ndarray, indent: int, summarize: bool, fmt: _Formatter) -> str:
    if values.ndim == 0:
        return fmt.format(values.item())
    if values.ndim == 1:
        return _vector(values, indent, summarize, fmt)
    edge = OPTIONS.edgeitems
    if summarize and values.shape[0] > 2 * edge:
        rows = [_nested(values[i], indent + 1, summarize, fmt) for i in range(edge)] + ["..."]
        rows += [_nested(values[i], indent + 1, summarize, fmt) for i in range(len(values) - edge, len(values))]
    else:
        rows = [_nested(values[i], indent + 1, summarize, fmt) for i in range(values.shape[0])]
    return "[" + ("," + "\n" * (values.ndim - 1) + " " * (indent + 1)).join(rows) + "]"


def values_str(values: np.ndarray, indent: int) -> str:
    """The bracketed numbers of a tensor, as PyTorch lays them out."""
    if values.size == 0:
        return "[]"
    summarize = values.size > OPTIONS.threshold
    floating = values.dtype.kind == "f"
    shown = _summarized(values) if summarize else values.reshape(-1)
    return _nested(values, indent, summarize, _Formatter(shown, floating))


def _add_suffixes(text: str, suffixes: list, indent: int) -> str:
    parts = [text]
    last_line = len(text) - text.rfind("\n") + 1
    for suffix in suffixes:
        if last_line + len(suffix) + 2 > OPTIONS.linewidth:
            parts.append(",\n" + " " * indent + suffix)
            last_line = indent + len(suffix)
        else:
            parts.append(", " + suffix)
            last_line += len(suffix) + 2
    parts.append(")")
    return "".join(parts)


def tensor_repr(t) -> str:
    prefix = "tensor("
    indent = len(prefix)
    data = t._data
    values = np.asarray(data if backend.is_numpy(data) else data.get())
    dtype = dtypes.from_numpy(values.dtype)
    suffixes = []
    if not backend.is_numpy(data):
        suffixes.append(f"device='{t.device}'")
    if values.size == 0:
        if values.ndim != 1:
            suffixes.append(f"size={tuple(values.shape)}")
        if dtype is not dtypes.get_default_dtype():
            suffixes.append(f"dtype={dtype!r}")
    elif dtype not in (dtypes.get_default_dtype(), dtypes.int64, dtypes.bool_):
        suffixes.append(f"dtype={dtype!r}")
    body = values_str(values, indent)
    if t.grad_fn is not None:
        suffixes.append(f"grad_fn=<{type(t.grad_fn).__name__}>")
    elif t._requires_grad:
        suffixes.append("requires_grad=True")
    return _add_suffixes(prefix + body, suffixes, indent)
