"""A derivation as a Python module that imports only NumPy: `value_and_grad`, with a tensor output
`value_and_jacobian`, with --order 2 `hessian`; each checks the point first (shapes, named sizes,
assumptions) and raises ValueError off the derivation. The module is hygienic: a name of the
program its own code needs is called otherwise inside it, and user text is an escaped literal."""

from __future__ import annotations

from ..symbolic import expr as E
from ..symbolic.matrix import softmax_from_log_softmax
from ..symbolic.printing import UnsupportedOperation
from ..symbolic.statements import Statements
from .derived import Derivation
from .errors import UsageProblem


def python_module(d: Derivation) -> str:
    """A module that imports only NumPy: value_and_grad(<inputs>) and, with --order 2,
    hessian(<inputs>). Each checks first that it is called at a point the derivation holds for:
    every input's shape as derived (named sizes the same wherever they are used) and every
    assumption true, else ValueError.

    The module is hygienic: a name of the program that the module's own code needs (np, a
    builtin, a helper's) is called otherwise inside it (`renamed`); where an input is, the
    public function only passes its arguments on to the one that computes. User text (the file
    name, the assumptions) is a literal: escaped in the docstring, repr'd in messages."""
    from ..symbolic.printing import NumpyPrinter

    first = [x for x in d.derivatives if len(x.wrt) == 1]
    second = [x for x in d.derivatives if len(x.wrt) == 2]
    checks = {f"_assumed{k}": a.test for k, a in enumerate(d.assumptions, 1) if a.test is not None}
    import keyword

    for name in d.inputs:
        if keyword.iskeyword(name):
            raise UsageProblem(f"--format python: the input {name!r} is a keyword of Python, so no Python function "
                               f"can take it by name; rename it (--format expr can write this program)")
    renamed = _module_names(d)
    inner = {n: renamed.get(n, n) for n in d.inputs}
    printer = NumpyPrinter(sizes=d.sizes, renamed=renamed)
    constants: list = []
    try:
        point = _function_body(Statements(checks, d.labels, taken=set(d.inputs)), printer, constants)
        computed = softmax_from_log_softmax({_value_name(d): d.value, **{x.name: x.expr for x in first}})
        grads = _function_body(Statements(computed, d.labels, taken=set(d.inputs)), printer, constants)
        hessian = _function_body(Statements({x.name: x.expr for x in second}, d.labels, taken=set(d.inputs)),
                                 printer, constants) if second else None
    except UnsupportedOperation as exc:
        raise UsageProblem(f"--format python cannot write {exc.args[0]}() in NumPy yet; --format expr can") from None
    parameters = ", ".join(d.inputs)
    arguments = ", ".join(inner.values())
    main = "value_and_jacobian" if d.jacobian else "value_and_grad"
    value_shape = printer._static(tuple(d.value.shape)) if d.value is not None else "()"
    shapes = ", ".join(f"{n}: {_shape_text(d, n)}" for n in d.inputs) or "none"
    helpers = "".join("\n\n" + h for h in printer.helpers)
    assumed = "".join(f"  {a.condition}  ({a.where})\n" for a in d.assumptions)
    begin = ("".join(f"    {n} = np.asarray({n}, dtype=np.float64)\n" for n in inner.values())
             + f"    {_POINT}({arguments})\n" + _size_bindings(d, renamed))
    forward = bool(renamed.keys() & set(d.inputs))  # an input's name is the module's: pass the arguments on
    user_names = _user_names(d)

    def public(name: str, doc: str, body: str) -> str:
        if not forward:
            return f"\n\ndef {name}({parameters}):\n    {doc}\n" + body
        computes = _fresh(f"_{name}", user_names)
        return (f"\n\ndef {name}({parameters}):\n    {doc}\n    return {computes}({parameters})\n"
                f"\n\ndef {computes}({arguments}):\n" + body)

    docstring = (f"The value and gradients of {d.source}, derived by autodiff (symbolic, simplified).\n\n"
                 f"Inputs and the shapes they were derived for: {shapes}"
                 + (" (every size: the names are sizes)" if d.sizes else "") + ".\n"
                 + (f"Derived assuming (checked at each call):\n{assumed}" if assumed else "")
                 + f"Needs only NumPy: value, {'jacobians' if d.jacobian else 'grads'} = {main}({parameters})"
                 + (f"; hessian({parameters})" if second else "") + "\n")
    doc = (f'"""({_docstring_text(d.output)}, {{input name: the Jacobian d{_docstring_text(d.output)}/d input, '
           f"{_docstring_text(d.output)}'s shape then the input's}})\"\"\"" if d.jacobian else
           f'"""({_docstring_text(d.output)}, {{input name: d{_docstring_text(d.output)}/d input}})"""')
    out = [
        '"""' + _docstring_text(docstring, keep_lines=True) + '"""\n\n',
        "import numpy as np\n",
        helpers,
        "\n\n" + _AS,
        "".join(constants) + ("\n\n" if constants else ""),
        _point_check(d, point, checks, renamed),
        public(main, doc, begin + grads
               + "    return _as({}, {}), {{{}}}\n".format(
                   printer._name(_value_name(d)), value_shape,
                   ", ".join(f"{x.wrt[0]!r}: _as({x.name}, {printer._static(tuple(x.expr.shape))})" for x in first))),
    ]
    if second:
        blocks: dict = {}
        for x in second:
            a, b = x.wrt
            blocks.setdefault(a, {})[b] = f"_as({x.name}, {printer._static(tuple(x.expr.shape))})"
            if b != a:  # ∂²/∂b∂a is ∂²/∂a∂b with a's and b's dimensions swapped
                na, nb = len(d.inputs[a]), len(d.inputs[b])
                axes = tuple(range(na, na + nb)) + tuple(range(na))
                block = blocks[a][b] if not axes else f"np.transpose({blocks[a][b]}, {axes})"
                blocks.setdefault(b, {})[a] = block
        rows = ", ".join(f"{a!r}: {{{', '.join(f'{b!r}: {text}' for b, text in row.items())}}}"
                         for a, row in blocks.items())
        doc = f'"""{{input a: {{input b: d2{_docstring_text(d.output)}/(da db)}}}}"""'
        out.append(public("hessian", doc, begin + hessian + f"    return {{{rows}}}\n"))
    return "".join(out)


def _module_names(d: Derivation) -> dict:
    """{a name of the program: what the module calls it}, for each name the module's own code
    needs: np, Python's keywords and builtins, and the names the module gives its helpers and
    constants (they begin with `_`)."""
    import builtins
    import keyword

    names = _user_names(d)
    reserved = {"np"} | set(dir(builtins)) | set(keyword.kwlist)
    clashing = sorted(n for n in names if n in reserved or n.startswith("_"))
    out: dict = {}
    for name in clashing:
        out[name] = _fresh(name + "_", names | set(out.values()) | reserved)
    return out


def _user_names(d: Derivation) -> set:
    """The names of the program a derived module writes: inputs, variables, sizes."""
    return set(d.inputs) | set(d.labels.values()) | {s for dims in d.shapes.values() for s in dims if isinstance(s, str)}


def _fresh(name: str, taken: set) -> str:
    while name in taken:
        name += "_"
    return name


def _docstring_text(text: str, keep_lines: bool = False) -> str:
    """Text inside a triple-quoted Python string, exactly as it reads: backslashes and quotes
    escaped, characters that are not printable (and bytes that were not UTF-8) as escapes."""
    out = []
    for c in str(text):
        if c == "\\" or c == '"':
            out.append("\\" + c)
        elif c == "\n" and keep_lines:
            out.append(c)
        elif c.isprintable() and not 0xD800 <= ord(c) <= 0xDFFF:
            out.append(c)
        else:
            out.append(ascii(c)[1:-1])
    return "".join(out)


def _shape_text(d: Derivation, name: str) -> str:
    """An input's shape as derived: `[n, n]` by its sizes' names where they are named."""
    dims = d.shapes.get(name) if d.sizes else None
    return "[" + ", ".join(str(s) for s in dims) + "]" if dims is not None else str(list(d.inputs[name]))


def _size_bindings(d: Derivation, renamed: dict) -> str:
    """`    n = x.shape[0]`: each named size, from the first input that has it."""
    return "".join(f"    {renamed.get(size, size)} = {renamed.get(name, name)}.shape[{dim}]\n"
                   for size, name, dim in d.bindings) if d.sizes else ""


_POINT = "_check_point"
_AS = (
    "def _as(value, shape):\n"
    "    value = np.asarray(value, dtype=np.float64)\n"
    "    return value if value.shape == shape else np.broadcast_to(value, shape).copy()\n\n\n")


def _function_body(program: Statements, printer, constants: list) -> str:
    """The statements of `program` as a function's body; array constants are made once, at import,
    into `constants`."""
    arrays = [e for e in E.postorder(list(program.roots.values())) if e.op == "tensor" and e not in program.names
              and e not in printer.names]
    for e in arrays:
        name = f"_C{sum(1 for n in printer.names.values() if n.startswith('_C')) + 1}"
        constants.append(f"{name} = {printer.text(e)}\n")
        printer.names[e] = name
    body = []
    for name, e, text in program.written(printer):
        if e.op == "tensor" and name not in program.roots:  # a named constant (X), made once too
            constants.append(f"{printer._name(name)} = {text}\n")
            printer.names[e] = name
        else:
            body.append(f"    {printer._name(name)} = {text}\n")
    for e, name in list(printer.names.items()):  # a function's own names are not the next one's
        if not name.startswith("_C") and e.op != "tensor":
            del printer.names[e]
    return "".join(body)


def _point_check(d: Derivation, body: str, checks: dict, renamed: dict) -> str:
    """`_check_point(<inputs>)`: ValueError unless each input (an array by then) has the shape it
    was derived for (each named size one size wherever it is used) and each assumption holds.
    Its parameters are the module's names of the inputs; its messages say the user's."""
    lines = [f"def {_POINT}({', '.join(renamed.get(n, n) for n in d.inputs)}):\n",
             '    """ValueError where this module does not hold: another shape, another path."""\n']
    bound = set()
    for name, shape in d.inputs.items():
        code = renamed.get(name, name)
        dims = d.shapes.get(name) if d.sizes else None
        if dims is None:
            lines.append(f"    if {code}.shape != {tuple(shape)!r}:\n"
                         f"        raise ValueError(f\"{name} has shape {{list({code}.shape)}}; derived for shape "
                         f"{list(shape)}\")\n")
            continue
        lines.append(f"    if {code}.ndim != {len(dims)}:\n"
                     f"        raise ValueError(f\"{name} has shape {{list({code}.shape)}}; derived for shape "
                     f"{_shape_text(d, name)}\")\n")
        for dim, size in enumerate(dims):
            if isinstance(size, str) and size not in bound:
                bound.add(size)
                lines.append(f"    {renamed.get(size, size)} = {code}.shape[{dim}]\n")
        expected = "(" + ", ".join(renamed.get(s, s) if isinstance(s, str) else str(s) for s in dims) \
            + ("," if len(dims) == 1 else "") + ")"
        values = ", ".join(f"{s} = {{{renamed.get(s, s)}}}" for s in dict.fromkeys(s for s in dims if isinstance(s, str)))
        lines.append(f"    if {code}.shape != {expected}:\n"
                     f"        raise ValueError(f\"{name} has shape {{list({code}.shape)}}; derived for shape "
                     f"{_shape_text(d, name)}" + (f" with {values}" if values else "") + "\")\n")
    if checks:  # the inputs are arrays already: each function converts them before calling this
        lines.append(body)
        for (name, _), a in zip(checks.items(), [a for a in d.assumptions if a.test is not None]):
            held = f"np.array_equal({name}, {a.value!r})" if isinstance(a.value, (bool, list)) and _is_bool(a.value) \
                else f"np.allclose({name}, {a.value!r}, rtol=1e-9, atol=0)"
            message = f"derived assuming {a.condition} ({a.where}); at this point {a.condition} is False"
            lines.append(f"    if not {held}:\n        raise ValueError({message!r})\n")
    lines.append("    return None\n")
    return "".join(lines)


def _is_bool(value) -> bool:
    if isinstance(value, list):
        return all(_is_bool(v) for v in value)
    return isinstance(value, bool)


def _value_name(d: Derivation) -> str:
    """The module's name for the output's value: the output's own, unless another name of the
    derivation has it (an input called as the output), then one of no name there."""
    taken = _user_names(d) | {x.name for x in d.derivatives}
    return d.output if d.output not in taken - {d.labels.get(d.value)} else _fresh("value", taken)
