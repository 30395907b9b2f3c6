"""The public surface of the operations: what users call, and the Tensor methods.

Each operation declares its surface where it is declared, once:

- `defop(..., doc=...)` — an op with a docstring is public: the registry makes the function
  users call from the op itself (`autodiff.exp`, the language's `exp`);
- `@public` — the same for a hand-written function whose arguments need handling (`sum`,
  `reshape`, `max`...);
- `@along_dim()` — `@public` with a method, for a function along its `dim` (sum, sort, split);
- `method=True` also makes it a Tensor method (`x.exp()`), as PyTorch has one; a function
  gives the method its own arguments where PyTorch's method differs (`x.reshape(2, 3)`);
- `inplace=True` adds the in-place method `name_` (`x.mul_(2)`), which rebinds the
  tensor's value and bumps its version (see `Tensor._apply_inplace`);
- `operators=("__add__", ...)` binds Python operators to it; `aliases=("clip",)` adds
  other names for the same function (and method).

`TensorMethods` is the mixin `Tensor` inherits (tensor.py): it starts empty and is filled in
here as the op modules are imported, so tensor.py names no operation. `PUBLIC` is the catalogue of
functions, in declaration order: `autodiff` exports it and the language calls nothing else.
"""

from __future__ import annotations

import functools
import inspect
import types

from ..tensor import TensorMethods
from .batching import Batched, dims, dispatch, has_batched
from .catalogue import Catalogue
from .spelling import declare as declare_spelling

PUBLIC = Catalogue()  # name -> the function users call
# name -> the Tensor method, where it takes other arguments than the function (`x.repeat(2, 1)`,
# `x.where(condition, other)`): the expression language calls it for `x.name(...)`.
METHOD_FORMS = Catalogue()


def declare(function, *, name: str | None = None, method=False, inplace: bool = False, operators=(), aliases=(),
            batch=None, batches_itself: bool = False, spelling=None):
    """Give `function` its public surface (see the module's docstring); returns what users call.
    `spelling` is how formulas write a call of it, where one is made (ops/spelling.py).

    `batch` is its rule for batched tensors (ops/batching.py); a function that does not see to
    batched tensors itself (as an op's `apply` does) is wrapped to follow its rule."""
    name = name or function.__name__
    if spelling is not None:
        declare_spelling(name, spelling, public=True)
    if not batches_itself:
        function = following_batches(function, batch)
    function = accepting_numpy_names(function)
    if PUBLIC.declared(name):
        raise ValueError(f"the public name {name!r} is declared twice")
    for public_name in (name, *aliases):
        PUBLIC.declare(public_name, function)
    if method:
        bound = function if method is True else _named(accepting_numpy_names(method), name, function.__doc__)
        for method_name in (name, *aliases):
            setattr(TensorMethods, method_name, bound)
            if method is not True:
                METHOD_FORMS.declare(method_name, bound)
    if inplace:
        setattr(TensorMethods, name + "_", _inplace(function, name + "_"))
    bind_operators(function, operators, batches_itself=True)
    return function


# PyTorch's argument parser takes NumPy's names for these two wherever a function has them.
NUMPY_NAMES = {"axis": "dim", "keepdims": "keepdim"}

_VARIADIC = inspect.CO_VARARGS | inspect.CO_VARKEYWORDS


def parameter_names(function) -> tuple:
    """The names of `inspect.signature(function).parameters`, in order. A plain function's are read
    from its code, without building a Signature (which costs about 15 us: every op and formula
    is read at import, on every start of the command line); anything else asks inspect."""
    while True:  # as inspect.signature: a __signature__ given, else through __wrapped__
        signature = getattr(function, "__signature__", None)
        if signature is not None:
            return tuple(signature.parameters)
        wrapped = getattr(function, "__wrapped__", None)
        if wrapped is None:
            break
        function = wrapped
    code = getattr(function, "__code__", None)
    if type(function) is not types.FunctionType or code.co_flags & _VARIADIC:
        return tuple(inspect.signature(function).parameters)
    return code.co_varnames[: code.co_argcount + code.co_kwonlyargcount]


def accepting_numpy_names(function):
    """`function`, also taking `axis=` for `dim=` and `keepdims=` for `keepdim=` (`cumsum(x, axis=0)`)."""
    try:
        parameters = parameter_names(function)
    except (TypeError, ValueError):
        return function
    aliases = {alias: real for alias, real in NUMPY_NAMES.items() if real in parameters and alias not in parameters}
    if not aliases:
        return function

    def spelled(*args, **kwargs):
        if kwargs:
            for alias in aliases.keys() & kwargs.keys():
                real = aliases[alias]
                if real in kwargs:  # both spellings: PyTorch's parser knows only the first
                    raise TypeError(f"{function.__name__}() got an unexpected keyword argument {alias!r}")
                kwargs[real] = kwargs.pop(alias)
        return function(*args, **kwargs)

    functools.update_wrapper(spelled, function)
    return spelled


def bind_operators(function, operators, *, batch=None, batches_itself: bool = False) -> None:
    """Python's operators (`__add__`...) call `function` (an op's `apply` directly: no wrapper)."""
    if operators and not batches_itself:
        function = following_batches(function, batch)
    for operator in operators:
        setattr(TensorMethods, operator, function)


_MAY_BATCH = frozenset((Batched, list, tuple))  # an argument that is, or may hold, a batched tensor


def following_batches(function, rule):
    """`function`, or `rule` when a batched tensor is among its arguments (see ops/batching.py).

    The check costs one class comparison per argument; an op's `apply` makes it itself."""

    def public(*args, **kwargs):
        for value in args:
            if value.__class__ in _MAY_BATCH:
                if has_batched(args, kwargs):
                    return dispatch(rule, function, args, kwargs)
                break
        else:
            if kwargs and has_batched((), kwargs):
                return dispatch(rule, function, args, kwargs)
        return function(*args, **kwargs)

    functools.update_wrapper(public, function)
    return public


def public(function=None, **surface):
    """`@public` or `@public(method=True, ...)`: declare a hand-written function's surface."""
    if function is not None:
        return declare(function, **surface)
    return lambda f: declare(f, **surface)


def along_dim(spelling=None, **rule):
    """`@along_dim()`: `@public` for a function and method that works along its argument `dim`
    (sum, softmax, sort, split, select), which a batch moves past its own dimension; `rule` is
    the rest of batching's `dims("dim", ...)` (`every=True`: a dim of None is every dim)."""
    return public(method=True, batch=dims("dim", **rule), spelling=spelling)


def tensor_method(name: str, *, batch=None):
    """`@tensor_method("view_as")`: a Tensor method that is not a public function."""

    def bind(function):
        method = following_batches(function, batch)
        setattr(TensorMethods, name, _named(method, name, function.__doc__))
        return function

    return bind


def _named(function, name: str, doc: str | None):
    function.__name__ = function.__qualname__ = name
    if function.__doc__ is None:
        function.__doc__ = doc
    return function


def _inplace(function, name: str):
    def method(self, *args, **kwargs):
        return self._apply_inplace(function, *args, **kwargs)

    return _named(method, name, f"In-place version of {function.__name__}(): the result becomes this tensor's value.")
