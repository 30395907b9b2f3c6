"""What a program needs before it runs: its inputs, declarations and functions.

Inputs are the names a program uses but never assigns (`a * b` needs a and b), in the order
they first appear, plus those it declares (`a: input = 2`). Unknown functions, misplaced
`return` and declarations are reported here, before anything is computed.
"""

from __future__ import annotations

from dataclasses import field

from .._record import record
from . import ast
from .builtins import CONSTANTS, FUNCTIONS, KNOWN_NAMES, WORDS, reduction_word, suggestion
from .errors import NameProblem, SyntaxProblem
from .foreign import (MODULES, PYTHON_CONSTRUCTS, autograd_advice, function_advice, module_advice, name_advice,
                      two_argument_log_advice)
from .source import Source

DECLARATION_KINDS = ("input", "const")


@record
class Analysis:
    """What the analysis finds in a program before it runs: its inputs, declarations, assignments,
    and spellings that likely meant something else."""

    inputs: list = field(default_factory=list)  # names, in order of first use or declaration
    first_use: dict = field(default_factory=dict)  # input name -> the node that first uses it
    declared: dict = field(default_factory=dict)  # name -> Declare node
    assigned: set = field(default_factory=set)  # names assigned at the top level
    functions: dict = field(default_factory=dict)  # name -> FunctionDef
    equalities: list = field(default_factory=list)  # top-level `y == x*2` statements: `=` meant?
    shapes: dict = field(default_factory=dict)  # input name -> its sizes, `A: input[n, n]`: names and ints
    sizes: dict = field(default_factory=dict)  # a declared size's name -> the input that declares it first
    powers_of_e: list = field(default_factory=list)  # `e ** x` where e is unbound: exp(x) meant?
    leaves: list = field(default_factory=list)  # (name or None, Call): `w = randn(3, requires_grad=True)`
    # Inputs named as a function is (`t` for time, as `x = v * t`): the name of a function the
    # program uses only as a value is the user's variable -> the node that first uses it
    function_names: dict = field(default_factory=dict)


def analyze(program: ast.Program, source: Source) -> Analysis:
    result = Analysis()
    _collect_top_level(program.body, result, source)
    _check_size_names(result, source)
    _find_inputs(program, result, source)
    return result


def _check_size_names(result: Analysis, source: Source) -> None:
    """A declared size is a name of the program (`X: input[m, n]` then `/ m` reads X's size): no
    other name of the program or of the language may be spelled the same."""
    for size, holder in result.sizes.items():
        node = result.declared[holder]
        if size in result.declared:
            other = f"the {result.declared[size].kind} declared on line {source.line_column(result.declared[size].start)[0]}"
        elif size in result.assigned:
            other = "a variable the program assigns"
        elif size in CONSTANTS:
            other = "the language's constant"
        elif size in FUNCTIONS or size in WORDS:
            other = "the language's function"
        else:
            continue
        raise NameProblem(f"{size!r} is a size of {holder!r} here, and also {other}: name the size "
                          f"otherwise, as {holder}: input[{size}_]", source, node.start, node.end)


def _collect_top_level(body, result: Analysis, source: Source) -> None:
    """Names the top level binds (in blocks too, but not inside function bodies)."""
    stack = list(reversed(body))
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.Assign, ast.AugAssign, ast.For)):
            result.assigned.add(node.target)
            if type(node) is ast.Assign and _requires_grad(node.value) is not None:
                result.leaves.append((node.target, node.value))
        elif isinstance(node, ast.Unpack):
            result.assigned.update(node.targets)
        elif isinstance(node, ast.FunctionDef):
            result.assigned.add(node.name)
            result.functions[node.name] = node
            continue  # its body binds names of its own
        elif isinstance(node, ast.Declare):
            if node.kind not in DECLARATION_KINDS and node.name in PYTHON_CONSTRUCTS:  # `try: ...`
                raise SyntaxProblem(PYTHON_CONSTRUCTS[node.name], source, node.start, node.start + len(node.name))
            if node.kind not in DECLARATION_KINDS:
                raise NameProblem(
                    f"unknown declaration {node.kind!r}: write `{node.name}: input = ...` or "
                    f"`{node.name}: const = ...`{suggestion(node.kind, DECLARATION_KINDS)}",
                    source, node.kind_start, node.kind_start + len(node.kind),
                )
            if node.kind == "const" and node.value is None:
                raise SyntaxProblem(f"the constant {node.name!r} needs a value: `{node.name}: const = ...`",
                                    source, node.start, node.end)
            if node.name in result.declared:
                raise NameProblem(f"{node.name!r} is declared twice", source, node.start, node.end)
            result.declared[node.name] = node
            if node.sizes is not None:
                result.shapes[node.name] = _sizes(node, source)
                for size in result.shapes[node.name]:
                    if isinstance(size, str):
                        result.sizes.setdefault(size, node.name)
        elif isinstance(node, ast.Return):
            raise SyntaxProblem("'return' outside a function", source, node.start, node.end)
        elif type(node) is ast.ExprStatement and type(node.value) is ast.Compare and node.value.ops == ("==",):
            result.equalities.append(node)
        stack.extend(reversed(ast.children(node)[0]))


def _sizes(node: ast.Declare, source: Source) -> tuple:
    """`A: input[n, 3]`'s sizes: each a name or a whole number; only an input has them."""
    if node.kind != "input":
        raise SyntaxProblem(f"only an input has sizes: `{node.name}: input[n]`", source, node.start, node.end)
    sizes = []
    for size in node.sizes:
        if size.isidentifier():
            sizes.append(size)
        elif size.isdigit():
            sizes.append(int(size))
        else:
            raise SyntaxProblem(f"a size is a name or a whole number, not {size}: `{node.name}: input[n, 3]`",
                                source, node.start, node.end)
    return tuple(sizes)


def _find_inputs(program: ast.Program, result: Analysis, source: Source) -> None:
    """Scan every expression; names nobody binds are inputs, in order of first appearance."""
    uses: dict = {}
    called: dict = {}  # a function's name -> a call of it
    for expression, local in _expressions(program.body, source):
        _scan(expression, local, result, uses, source, called)
    for name, node in uses.items():
        if name in FUNCTIONS:
            if name in called:
                call = called[name]
                raise NameProblem(f"{name!r} is called as a function (line {source.line_column(call.start)[0]}) and "
                                  f"used here as a value: give the value another name (as {name}0)",
                                  source, node.start, node.end)
            result.function_names[name] = node
    for name, node in uses.items():
        result.first_use[name] = node
    ordered = sorted(
        [(node.start, name) for name, node in result.declared.items() if node.kind == "input"]
        + [(node.start, name) for name, node in uses.items()]
    )
    result.inputs = [name for _, name in ordered]


def _expressions(body, source: Source):
    """Every expression of the program, with the names bound locally where it stands."""
    stack: list = [(statement, frozenset(), False) for statement in reversed(body)]
    while stack:
        node, local, in_function = stack.pop()
        if in_function and type(node) is ast.Declare:
            raise SyntaxProblem("declarations belong at the top level of the program", source, node.start, node.end)
        statements, expressions = ast.children(node)
        for expression in expressions:
            if type(expression) is ast.Param:  # a parameter's default, computed where the def stands
                yield from ((default, local) for default in ast.children(expression)[1])
            else:
                yield expression, local
        if type(node) is ast.FunctionDef:
            local, in_function = local | bound_in(node), True
        stack.extend((s, local, in_function) for s in reversed(statements))


def _scan(root, local: frozenset, result: Analysis, uses: dict, source: Source, called: dict) -> None:
    """Record the free names of one expression (without recursion), and in `called` the functions
    of the language it calls by name."""
    assigned, declared = result.assigned, result.declared
    stack = [root]
    pop, push = stack.pop, stack.append
    while stack:
        node = pop()
        kind = type(node)
        if kind is ast.Name:
            name = node.id
            if name in local or name in assigned or name in declared or name in CONSTANTS or name in WORDS \
                    or name in result.sizes:
                continue
            advice = name_advice(name)
            if advice is not None:
                raise NameProblem(advice, source, node.start, node.end)
            if name not in uses:
                uses[name] = node
        elif kind is ast.BinOp:
            if node.op == "**" and type(node.left) is ast.Name and node.left.id == "e" and "e" not in local:
                result.powers_of_e.append(node)
            push(node.right)
            push(node.left)
        elif kind is ast.Number or kind is ast.Constant:
            pass
        elif kind is ast.Call:
            _check_callee(node, result, local, source)
            func = node.func
            if type(func) is ast.Name and func.id in FUNCTIONS and func.id not in local \
                    and func.id not in result.functions:
                called.setdefault(func.id, node)
            if _requires_grad(node) is not None and all(call is not node for _, call in result.leaves):
                result.leaves.append((None, node))
            if type(node.func) is ast.Attribute:
                push(node.func.value)
            stack.extend(node.args)
            stack.extend(k.value for k in node.keywords if reduction_word(node, k, result.functions) is None)
        elif kind is ast.UnaryOp:
            push(node.operand)
        else:
            if kind is ast.Attribute:
                _check_module(node, None, result, local, source)
                advice = autograd_advice(node.name, _code(source, node.value), called=False)
                if advice is not None:
                    raise NameProblem(advice, source, node.start, node.end)
            stack.extend(ast.children(node)[1])


def _check_callee(node: ast.Call, result: Analysis, local: frozenset, source: Source) -> None:
    func = node.func
    if isinstance(func, ast.Name):
        name = func.id
        if name == "log" and name not in result.functions and name not in local and len(node.args) == 2 \
                and not node.keywords:  # log(x, 2): a base, as Python's math.log takes it
            raise NameProblem(two_argument_log_advice([source.snippet(a.start, a.end) for a in node.args]),
                              source, node.start, node.end)
        if name in result.functions or name in local or name in FUNCTIONS or name in WORDS:
            return
        if name in result.assigned or name in result.declared:
            raise NameProblem(f"{name!r} is a value, not a function", source, func.start, func.end)
        advice = function_advice(name, _arguments(node, source))
        if advice is not None:
            raise NameProblem(f"unknown function {name!r}: {advice}", source, func.start, func.end)
        candidates = set(KNOWN_NAMES) | set(result.functions)
        raise NameProblem(f"unknown function {name!r}{suggestion(name, candidates)}", source, func.start, func.end)
    if isinstance(func, ast.Attribute):
        _check_module(func, node, result, local, source)
        if func.name not in FUNCTIONS:
            advice = autograd_advice(func.name, _code(source, func.value), called=True)
            if advice is not None:
                raise NameProblem(advice, source, func.start, func.end)
            raise NameProblem(
                f"unknown method {func.name!r}{suggestion(func.name, FUNCTIONS)}", source, func.start, func.end
            )
        return
    raise NameProblem("only named functions can be called", source, func.start, func.end)


def _arguments(call: ast.Call, source: Source) -> str:
    """The call's arguments as written, keywords too: advice that drops them would change the call."""
    parts = sorted((*call.args, *call.keywords), key=lambda a: a.start)
    return ", ".join(source.snippet(a.start, a.end) for a in parts) or "x"


def _check_module(attribute: ast.Attribute, call, result: Analysis, local: frozenset, source: Source) -> None:
    """`torch.sum(x)`, `np.pi`, `torch.nn.functional.relu(x)`: another library's prefix, which
    autodiff does not need, unless the program binds that name itself."""
    root = attribute
    while type(root) is ast.Attribute:
        root = root.value
    if type(root) is not ast.Name or root.id not in MODULES:
        return
    name = root.id
    if name in local or name in result.assigned or name in result.declared:
        return
    module = source.snippet(root.start, attribute.value.end) if hasattr(attribute.value, "end") else name
    arguments = _arguments(call, source) if call is not None else ""
    raise NameProblem(module_advice(module, attribute.name, arguments, call is not None), source, root.start,
                      attribute.end)


def bound_in(function: ast.FunctionDef) -> frozenset:
    """The names a function binds, its local variables as Python counts them: its parameters,
    what it assigns anywhere in its body, and the functions it defines."""
    names = {p.name for p in function.params}
    stack = list(function.body)
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.Assign, ast.AugAssign, ast.For)):
            names.add(node.target)
        elif isinstance(node, ast.Unpack):
            names.update(node.targets)
        elif isinstance(node, ast.FunctionDef):
            names.add(node.name)
            continue
        stack.extend(ast.children(node)[0])
    return frozenset(names)


def input_advice(program: ast.Program, source: Source, name: str) -> str:
    """How to make an assigned or constant `name` an input, for `--wrt w` and `--why w`: a
    gradient is taken with respect to inputs, and `w = randn(5, 3)` is a value of the program."""
    stack = list(reversed(program.body))
    while stack:
        node = stack.pop()
        kind = type(node)
        if kind is ast.FunctionDef:
            continue  # its names are its own
        if kind is ast.Assign and node.target == name or kind is ast.Declare and node.name == name:
            break
        stack.extend(reversed(ast.children(node)[0]))
    else:
        return ""
    line = source.line_column(node.start)[0]
    value = leaf_value(source, node.value) if node.value is not None else "..."
    what = "declares it a constant" if type(node) is ast.Declare else "assigns it, a value the program computes"
    return (f": line {line} {what}; to differentiate with respect to it, declare it an input: "
            f"`{name}: input = {value}`")


def equality_advice(statement: ast.ExprStatement, source: Source,
                    what: str = "is a comparison, not an assignment") -> str:
    """`y == x*2` as a statement: "`y == x*2` is a comparison, not an assignment; did you mean `y = x*2`?"."""
    compare = statement.value
    text = f"`{_code(source, compare)}` {what}"
    if type(compare.left) is not ast.Name:
        return text
    return f"{text}; did you mean `{compare.left.id} = {_code(source, compare.comparators[0])}`?"


def _code(source: Source, node, width: int = 60) -> str:
    """A node's source text for a one-line message: its spaces joined, a long one cut short."""
    text = " ".join(source.snippet(node.start, node.end).split())
    return text if len(text) <= width else text[: width - 3] + "..."


def _requires_grad(node):
    """The `requires_grad=True` keyword of a call (`randn(3, requires_grad=True)`), or None."""
    if type(node) is not ast.Call:
        return None
    for keyword in node.keywords:
        if keyword.name == "requires_grad" and type(keyword.value) is ast.Constant and keyword.value.value is True:
            return keyword
    return None


def leaf_value(source: Source, node) -> str:
    """A value's source text for `NAME: input = ...`: a call without its requires_grad keyword
    (an input requires grad by being one)."""
    keyword = _requires_grad(node)
    if keyword is None:
        return _code(source, node)
    parts = [source.snippet(a.start, a.end) for a in sorted((*node.args, *node.keywords), key=lambda a: a.start)
             if a is not keyword]
    return f"{_code(source, node.func)}({', '.join(parts)})"


def leaf_advice(name: str | None, call, source: Source) -> str:
    """Why `w = randn(3, 2, requires_grad=True)` gives no input, and what to write for one."""
    value = leaf_value(source, call)
    if name is None:
        return ("requires_grad=True makes a leaf that is not an input: its gradient is not shown, checked or derived; "
                f"to differentiate with respect to it, declare an input: `NAME: input = {value}`")
    from .option_names import option

    return (f"requires_grad=True makes {name!r} a leaf that is not an input: its gradient is shown among the "
            f"variables, but {option('check')}, {option('wrt')} and derive leave it out; to differentiate with respect "
            f"to it, declare it an input: `{name}: input = {value}`")
