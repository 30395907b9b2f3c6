"""Golden error messages: text, file:line:column, the line and a caret, and the exit status."""

import pytest

from autodiff.cli.exit_codes import status_for
from autodiff.language import Options, ProgramError, run
from autodiff.language.option_names import flags

GOLDEN = [
    ('', {}, 3,
     'expr.txt: error: the program is empty: write an expression, as `e = a * b + log(d) * c`'),
    ('# only a comment\n\n', {}, 3,
     'expr.txt: error: the program is empty: write an expression, as `e = a * b + log(d) * c`'),
    ('1+', {}, 3,
     "expr.txt:1:2: error: expected an expression after '+'\n    1+\n     ^"),
    ('(1+2', {}, 3,
     "expr.txt:1:1: error: unclosed '('\n    (1+2\n    ^"),
    ('u = a * b\nt = log(d\ne = u + t\n', {}, 3,  # a later line joined to the unclosed one
     "expr.txt:2:8: error: unclosed '('\n    t = log(d\n           ^"),
    ('1 $ 2', {}, 3,
     "expr.txt:1:3: error: unexpected character '$'\n    1 $ 2\n      ^"),
    ('y = 3 − x', {'x': 1}, 3,
     "expr.txt:1:7: error: unexpected character '−' (U+2212 MINUS SIGN); did you mean '-'?\n    y = 3 − x\n          ^"),
    ("__import__('os').system('id')", {}, 3,
     "expr.txt:1:12: error: strings are not supported: expressions use numbers, names and [lists]\n    __import__('os').system('id')\n               ^"),
    ('lgo(x)', {'x': 1}, 3,
     "expr.txt:1:1: error: unknown function 'lgo'; did you mean 'log'?\n    lgo(x)\n    ^~~"),
    ('e = a * b', {'a': 1}, 2,
     "expr.txt:1:9: error: no value for input 'b': give one with --at b=VALUE\n    e = a * b\n            ^"),
    ("(" * 100_000 + ")" * 100_000, {}, 3,
     'expr.txt:1:201: error: too many nested brackets: more than 200 levels\n    ...((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((...\n                                        ^'),
    ("9" * 5000, {}, 3,
     'expr.txt:1:1: error: number literal is too long: 5000 characters (at most 100)\n    9999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999...\n    ^~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~'),
    ('zeros(100000, 100000)', {}, 4,
     'expr.txt:1:1: error: zeros(100000, 100000) would create 10,000,000,000 elements; the limit is 50,000,000 (--max-elements)\n    zeros(100000, 100000)\n    ^~~~~~~~~~~~~~~~~~~~~'),
    ('y = ones(2, 3) + ones(4)', {}, 4,
     "expr.txt:1:16: error: '+' of shapes [2, 3] and [4]: The size of tensor a (3) must match the size of tensor b (4) at non-singleton dimension 1\n    y = ones(2, 3) + ones(4)\n                   ^"),
    ('a + b = 3', {}, 3,
     'expr.txt:1:7: error: cannot assign to an expression: only a name can be assigned (a = ...)\n    a + b = 3\n          ^'),
    ('if x:\ny = 1', {'x': 1}, 3,
     "expr.txt:1:6: error: expected an indented block after ':'\n    if x:\n         ^"),
    ('x = 1\n  y = 2', {}, 3,
     'expr.txt:2:3: error: unexpected indent\n      y = 2\n      ^'),
    ('f(a=1, 2)', {'a': 1}, 3,
     'expr.txt:1:8: error: positional argument follows keyword argument\n    f(a=1, 2)\n           ^'),
    ('x.\n', {'x': 1}, 3,
     "expr.txt:1:2: error: expected a name after '.'\n    x.\n     ^"),
    ('1 2', {}, 3,
     'expr.txt:1:3: error: unexpected number 2: is an operator or a comma missing before it?\n    1 2\n      ^'),
    ('sum(x, 1, 2, 3)', {'x': [1.0]}, 3,
     'expr.txt:1:1: error: sum() takes 3 positional arguments but 4 were given: sum(input, dim=None, keepdim=False, *, dtype=None)\n    sum(x, 1, 2, 3)\n    ^~~~~~~~~~~~~~~'),
    ('log(x, y)', {'x': 1, 'y': 2}, 3,
     'expr.txt:1:1: error: log takes one argument (the natural logarithm): write log(x) / log(y) for the logarithm '
     'base y\n    log(x, y)\n    ^~~~~~~~~'),
    ('exp(x, y)', {'x': 1, 'y': 2}, 3,
     'expr.txt:1:1: error: exp() takes 1 positional argument but 2 were given: exp(input)\n    exp(x, y)\n    ^~~~~~~~~'),
    ('y = log + 1', {}, 2,
     "expr.txt:1:5: error: no value for input 'log': give one with --at log=VALUE; or, for the function log, call "
     "it: log(...)\n    y = log + 1\n        ^~~"),
    ('y = sum(t(A)) * t', {'A': [[1.0]], 't': 2.0}, 3,
     "expr.txt:1:17: error: 't' is called as a function (line 1) and used here as a value: give the value another "
     "name (as t0)\n    y = sum(t(A)) * t\n                    ^"),
    ('x = 1\nx(2)', {}, 3,
     "expr.txt:2:1: error: 'x' is a value, not a function\n    x(2)\n    ^"),
    ('W @ v', {'W': [[1, 2], [3, 4]], 'v': [1, 2, 3]}, 4,
     "expr.txt:1:3: error: '@' of shapes [2, 2] and [3]: size mismatch, got input (2), mat (2x2), vec (3)\n    W @ v\n      ^"),
    ('for i in range(10**7):\n    s = i', {}, 4,
     'expr.txt:1:1: error: more than 1,000,000 loop turns (--max-iterations)\n    for i in range(10**7):\n    ^~~~~~~~~~~~~~~~~~~~~'),
    ('def f(x):\n    return f(x)\nf(1)', {}, 4,
     'expr.txt:2:12: error: calls nested more than 100 deep (a limit of the language)\n        return f(x)\n               ^~~~'),
    ('if x: y = 1\ny', {'x': [1.0, 2.0]}, 4,
     'expr.txt:1:4: error: a condition must be a single value, but this one has 2 (use all(...) or any(...))\n    if x: y = 1\n       ^'),
    ('x.foo', {'x': 1}, 3,
     "expr.txt:1:1: error: unknown attribute 'foo'\n    x.foo\n    ^~~~~"),
    ('x.sumx()', {'x': 1}, 3,
     "expr.txt:1:1: error: unknown method 'sumx'; did you mean 'sum'?\n    x.sumx()\n    ^~~~~~"),
    ('a: inpt = 2', {}, 3,
     "expr.txt:1:4: error: unknown declaration 'inpt': write `a: input = ...` or `a: const = ...`; did you mean 'input'?\n    a: inpt = 2\n       ^~~~"),
    ('return 1', {}, 3,
     "expr.txt:1:1: error: 'return' outside a function\n    return 1\n    ^~~~~~~~"),
    ('y = x\nx = 2\ny', {}, 4,
     "expr.txt:1:5: error: 'x' is used before it is assigned\n    y = x\n        ^"),
    ('x[5]', {'x': [1.0, 2.0]}, 4,
     'expr.txt:1:1: error: index 5 is out of bounds for dimension 0 with size 2\n    x[5]\n    ^~~~'),
    ("'a'", {}, 3,
     "expr.txt:1:1: error: strings are not supported: expressions use numbers, names and [lists]\n    'a'\n    ^"),
    ('2j', {}, 3,
     "expr.txt:1:1: error: invalid number literal '2j'...\n    2j\n    ^~"),
    ('x = (1, 2', {}, 3,
     "expr.txt:1:5: error: unclosed '('\n    x = (1, 2\n        ^"),
    ('[1, 2]]', {}, 3,
     "expr.txt:1:7: error: unmatched ']'\n    [1, 2]]\n          ^"),
    ('def g(:\n', {}, 3,
     "expr.txt:1:7: error: unexpected ':'; expected a name or ')'\n    def g(:\n          ^"),
    ('y = 1 if x else', {'x': 1}, 3,
     "expr.txt:1:12: error: expected an expression after 'else'\n    y = 1 if x else\n               ^~~~"),
    ('x @ 2', {'x': [1.0]}, 4,
     "expr.txt:1:3: error: '@' of shapes [1] and a number: matmul(): argument 'input' and 'other' must be Tensors\n    x @ 2\n      ^"),
    ('g: const', {}, 3,
     "expr.txt:1:1: error: the constant 'g' needs a value: `g: const = ...`\n    g: const\n    ^~~~~~~~"),
    # an input close to an assigned name is probably that name misspelt
    ('u = a * b\ne = uu + 2 * a', {'a': 1, 'b': 2}, 2,
     "expr.txt:2:5: error: no value for input 'uu': give one with --at uu=VALUE; did you mean 'u'?\n"
     "    e = uu + 2 * a\n        ^~"),
    # ... or close to an input given its value, or to a value given that nothing uses
    ('e = uu + u', {'u': 1}, 2,
     "expr.txt:1:5: error: no value for input 'uu': give one with --at uu=VALUE; did you mean 'u'?\n"
     "    e = uu + u\n        ^~"),
    ('u = a * b\ne = u + cc', {'a': 2, 'b': 3, 'c': 5}, 2,
     "expr.txt:2:9: error: no value for input 'cc': give one with --at cc=VALUE; did you mean 'c'?\n"
     "    e = u + cc\n            ^~"),
    ('total = a * 2\nnorm = a / totl + nrm', {'a': 1}, 2,
     "expr.txt:2:12: error: no values for the inputs 'totl' and 'nrm': give them with --at totl=VALUE,nrm=VALUE; "
     "did you mean 'total' for 'totl', 'norm' for 'nrm'?\n    norm = a / totl + nrm\n               ^~~~"),
    ('y == x*2\nz = y + 1', {'x': 1}, 2,  # `=` meant
     "expr.txt:1:1: error: no value for input 'y': give one with --at y=VALUE; `y == x*2` is a comparison, "
     "not an assignment; did you mean `y = x*2`?\n    y == x*2\n    ^"),
    # unpacking into names, as Python's
    ('a, 2 = x', {'x': [1.0, 2.0]}, 3,
     "expr.txt:1:4: error: unexpected number 2; expected '=' or a name\n    a, 2 = x\n       ^"),
    ('a, b = x', {'x': [1.0, 2.0, 3.0]}, 4,
     "expr.txt:1:1: error: too many values to unpack (expected 2, got 3)\n    a, b = x\n    ^~~~~~~~"),
    ('a, b, c = sort(x)', {'x': [1.0, 2.0]}, 4,
     "expr.txt:1:1: error: not enough values to unpack (expected 3, got 2)\n    a, b, c = sort(x)\n    ^~~~~~~~~~~~~~~~~"),
    ('a, b = sum(x)', {'x': [1.0, 2.0]}, 4,
     "expr.txt:1:8: error: cannot unpack a 0-d tensor\n    a, b = sum(x)\n           ^~~~~~"),
    ('a, b = 2', {}, 4,
     "expr.txt:1:8: error: cannot unpack int (a tuple or a tensor's rows can be unpacked)\n    a, b = 2\n           ^"),
]


@pytest.mark.parametrize("text,at,exit_code,expected", GOLDEN, ids=[str(i) for i in range(len(GOLDEN))])
def test_golden_error(text, at, exit_code, expected):
    with pytest.raises(ProgramError) as info, flags():  # as the command line says them
        run(text, "expr.txt", at=at)
    assert info.value.render() == expected
    assert status_for(info.value) == exit_code


def test_an_error_names_what_a_python_caller_gave_in_python_terms():
    with pytest.raises(ProgramError, match=r"give one with at=\{'x': VALUE\}"):
        run("y = x * 2", "f.txt")
    with pytest.raises(ProgramError, match="give one with --at x=VALUE"), flags():
        run("y = x * 2", "f.txt")
    with pytest.raises(ProgramError, match=r"\(Options.max_iterations\)"):
        run("s = 0\nfor i in range(10):\n    s = s + i", "f.txt", options=Options(max_iterations=3))


def test_errors_are_one_family_with_locations():
    with pytest.raises(ProgramError) as info:
        run("x = 1\ny = x +", "f.txt")
    assert info.value.location == (2, 7)  # the "+" that has nothing after it
    assert info.value.source.name == "f.txt"

