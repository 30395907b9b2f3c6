"""Binding the values a run is given (--at, --points, `at=`) to the program's inputs.

Each input becomes a leaf tensor in the run's dtype and device that requires grad (unless
--wrt leaves it out), checked against its declaration (`X: input[m, n]`: as many dims, each
named size the same wherever it is used) and refused where the dtype would make it inf. An
input with no value is an error whose message ends with missing_inputs.py's hints.

`InputBinding` is the evaluator's (evaluate.py's `_Runner`) part that does it: it reads the
run's state (`at`, `wrt`, `globals`, `sizes`, `result`...) and its `_located`.
"""

from __future__ import annotations

import math

import numpy as np

from .. import Tensor
from ..ops.batching import Batched
from . import ast
from .errors import InputProblem
from .missing_inputs import missing_input_hints
from .option_names import input_values


class InputBinding:
    """The values given, bound to the program's inputs (a part of the evaluator's runner)."""

    def _bind_undeclared_inputs(self) -> None:
        analysis = self.result.analysis
        missing = [name for name in analysis.inputs if name not in self.at and
                   (name not in analysis.declared or analysis.declared[name].value is None)]
        if len(missing) > 1:  # all of them in one message, in the order the program uses them
            node = analysis.first_use.get(missing[0]) or analysis.declared[missing[0]]
            names = ", ".join(repr(n) for n in missing[:-1]) + f" and {missing[-1]!r}"
            raise InputProblem(f"no values for the inputs {names}: give them with {input_values(missing)}"
                               + self._missing_hints(missing), self.source, node.start, node.end)
        for name in analysis.inputs:
            if name in analysis.declared:
                continue  # bound when its declaration runs
            node = analysis.first_use[name]
            if name not in self.at:
                raise InputProblem(f"no value for input {name!r}: give one with {input_values([name])}"
                                   + self._missing_hints([name]), self.source, node.start, node.end)
            self._bind_input(name, self.at[name], node, requires_grad=True)

    def _bind_input(self, name: str, value, node, requires_grad: bool) -> Tensor:
        if value.__class__ is Batched:  # many points at once: the caller made the leaves
            declared = self.result.analysis.shapes.get(name)
            if declared is not None:
                self._check_sizes(name, tuple(value.shape), declared, node)
            table = self.result.inputs if requires_grad else self.result.constants
            table[name] = self.globals[name] = value
            return value
        tensor = self._leaf(value, node, f"the value of {name!r}")
        declared = self.result.analysis.shapes.get(name)
        if declared is not None:
            self._check_sizes(name, tuple(tensor.shape), declared, node)
        if requires_grad and (self.wrt is None or name in self.wrt):
            if not tensor.dtype.is_floating_point:
                tensor = tensor.to(self.dtype)
            tensor.requires_grad_(True)
        if requires_grad and self.options.trace is not None:
            tensor = self.options.trace.input(name, tensor)
        if declared is not None:  # `X: input[m, n]`: m and n are X's sizes from here on
            for size, value in zip(declared, tensor.shape):
                if isinstance(size, str) and size not in self.globals:
                    self.globals[size] = value
        if requires_grad:
            self.result.inputs[name] = tensor
        else:
            self.result.constants[name] = tensor
        self.globals[name] = tensor
        return tensor

    def _check_sizes(self, name: str, shape: tuple, declared: tuple, node) -> None:
        """An input's value against its declaration `A: input[n, n]`: as many dims, the numbers
        equal, each named size the same wherever it is used."""
        problem = None
        if len(shape) != len(declared):
            problem = f"has {len(shape)} dims"
        else:
            for size, value in zip(declared, shape):
                bound = self.sizes.setdefault(size, value) if isinstance(size, str) else size
                if bound != value:
                    problem = (f"gives {size} = {value}, where it is {bound}" if isinstance(size, str)
                               else f"has {value} where it declares {size}")
                    break
        if problem is not None:
            written = "[" + ", ".join(str(s) for s in declared) + "]"
            raise InputProblem(f"the value of {name!r} has shape {list(shape)}, declared {written}: it {problem}",
                               self.source, node.start, node.end)

    def _leaf(self, value, node, what: str) -> Tensor:
        from .. import tensor as make

        if isinstance(value, Tensor):
            data = value.detach()
            if data.dtype.is_floating_point and data.dtype is not self.dtype:
                data = data.to(self.dtype)
            return make(data.numpy(force=True), dtype=data.dtype, device=self.options.device)
        if isinstance(value, (list, tuple, np.ndarray)):
            with self._located(node.start, node.end, f"{what} is not a tensor: ", problem=InputProblem):
                return self._in_range(make(value, dtype=self.dtype, device=self.options.device), value, node, what)
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise InputProblem(f"{what} must be a number or a tensor, not {_describe_value(value)}",
                               self.source, node.start, node.end)
        try:
            number = float(value)
        except OverflowError:  # an integer beyond float64's range
            number = math.inf
        return self._in_range(make(number, dtype=self.dtype, device=self.options.device), value, node, what)

    def _in_range(self, tensor: Tensor, value, node, what: str) -> Tensor:
        """A value that becomes inf in the run's dtype (1e39 in float32) is refused, not made inf."""
        if not tensor.dtype.is_floating_point or bool(tensor.detach().isfinite().all()):
            return tensor
        with np.errstate(over="ignore", invalid="ignore"):
            given = np.asarray(value, dtype=object if isinstance(value, int) else None)
            finite = np.isfinite(given.astype(np.float64)) if given.dtype != object else np.array(False)
        made = np.asarray(tensor.detach().numpy(force=True))
        lost = finite & ~np.isfinite(made)
        if not np.any(lost):
            return tensor
        number = given.reshape(-1)[int(np.argmax(lost.reshape(-1)))] if given.ndim else given
        largest = float(np.finfo(made.dtype).max)
        raise InputProblem(f"{what} holds {float(number):g}, beyond the range of {tensor.dtype.name} (at most about "
                           f"{largest:.2g}): it would be inf", self.source, node.start, node.end)

    def _batched_default(self, name: str, default, node: ast.Declare):
        """An input left at its default, where the other inputs hold many points at once (--points):
        the default is every point's own leaf, so that each point has its gradient, as it has
        when run alone, and not one gradient summed over the points."""
        size = self.options.points
        if size is None or node.kind != "input" or not (self.wrt is None or name in self.wrt):
            return default
        if default.__class__ is Batched:  # a default computed from other inputs: each point's own
            value = default.physical.detach()
        else:
            value = self._leaf(default, node, f"the value of {name!r}")
            value = value.expand((size, *value.shape))
        if not value.dtype.is_floating_point:
            value = value.to(self.dtype)
        return Batched(value.clone().requires_grad_(True))

    def _missing_hints(self, missing: list) -> str:
        return missing_input_hints(missing, self.result.analysis, self.source, set(self.at) | set(self.unused_at))


def _describe_value(value) -> str:
    from .evaluate import describe  # how the evaluator names a value (evaluate.py imports this module)

    return describe(value)
