"""Random programs for the differential tests, rendered once as text.

The language is a Python subset, so one text serves both sides: autodiff runs it with
`autodiff.language.run`, and PyTorch (or Python with `math`) runs it with `exec` in a
namespace that binds the same names to torch (or math) functions. Exec is applied only to
programs generated here, in test code.

A generator takes a `random.Random`: Hypothesis supplies one (`st.randoms`) so examples are
derandomised and shrinkable; `bench/differential.py` supplies seeded ones.

Constructs that give known wrong answers today are behind FLAGS (off in the main
generators, on in one xfail test each); see KNOWN.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

import numpy as np

# Known wrong answers (once found), each a flag a generator can switch on.
KNOWN = {
    "closure": "a function defined inside a function read a global, not the enclosing function's variable",
    "default_once": "default arguments were evaluated at each call, not once at def",
    "read_then_assign": "a name read then later assigned in a function was accepted (Python: UnboundLocalError)",
    "view_after_copy": "view after flip / fancy indexing / cat of transposes was refused",
    "mixed_index": "mixed advanced indexing x[i, a:, [j, k]] gave NumPy's axis order, not PyTorch's",
    "max_two_args": "max(x, 0) reduced over dim 0 where a reader of Python means the larger value; now refused",
    "multi_root_backward": "autograd.backward with one root depending on another lost gradients",
    "narrow_negative": "narrow with a negative start",
    "reshape_alias": "found by these tests: reshape of a non-contiguous tensor that PyTorch can still view is "
                     "ReshapeAliasBackward0 there, was ViewBackward0 here",
}

TENSOR_CATEGORIES = ("elementwise", "reduction", "matmul", "indexing", "shape", "control", "function",
                     "detach", "second_order", "float32")


@dataclass
class Var:
    name: str
    shape: tuple
    bound: float = 2.0  # a rough bound on |values|, to keep exp and powers finite
    ties: bool = False  # may hold equal values (max/min gradients are then a choice)
    contig: bool = True  # contiguous in PyTorch (so `view` is allowed there)
    copied: bool = False  # contiguous because made by flip / fancy indexing / cat
    grad: bool = True


@dataclass
class RandomProgram:
    """A program drawn at random for the differential tests: its text, inputs and output (not
    the language's syntax tree, autodiff.language.Program)."""

    text: str
    inputs: dict  # name -> nested list of floats
    output: str
    category: str
    dtype: str = "float64"
    weights: list | None = None  # for the loss sum(output * weights)
    extra: dict = field(default_factory=dict)

    def at_text(self) -> str:
        """The inputs as `--at` arguments."""
        return " ".join(f"--at {k}={_compact(v)}" for k, v in self.inputs.items())


def _compact(value) -> str:
    return repr(value).replace(" ", "")


def _numel(shape) -> int:
    return int(np.prod(shape, dtype=np.int64)) if shape else 1


UNARY = ["exp", "log", "sqrt", "sin", "cos", "tanh", "sigmoid", "relu", "abs", "square", "reciprocal",
         "log1p", "expm1", "neg", "pow2", "pow3", "powhalf"]


class TensorGen:
    """Builds one tensor program statement by statement, keeping shapes and bounds known."""

    def __init__(self, rng, flags=frozenset(), category="elementwise"):
        self.rng = rng
        self.flags = set(flags)
        self.category = category
        self.lines: list[str] = []
        self.inputs: dict = {}
        self.pool: list[Var] = []
        self.count = 0
        self.functions = 0

    # -- helpers ---------------------------------------------------------------------------
    def value(self):
        v = self.rng.uniform(0.2, 2.0) * self.rng.choice((-1, 1))
        return round(v, 3)

    def new_input(self, shape) -> Var:
        name = f"x{len(self.inputs)}"
        arr = [self.value() for _ in range(_numel(shape))]
        self.inputs[name] = np.array(arr).reshape(shape).tolist() if shape else arr[0]
        var = Var(name, tuple(shape), bound=2.0)
        self.pool.append(var)
        return var

    def random_shape(self, max_ndim=3):
        ndim = self.rng.randint(0, max_ndim)
        return tuple(self.rng.randint(1, 4) for _ in range(ndim))

    def pick(self, cond=lambda v: True) -> Var | None:
        choices = [v for v in self.pool if cond(v)]
        return self.rng.choice(choices) if choices else None

    def emit(self, expr: str, like: Var, indent="") -> Var:
        if like.bound > 50:
            expr, like.bound = f"tanh({expr})", 1.0
        name = f"v{self.count}"
        self.count += 1
        self.lines.append(f"{indent}{name} = {expr}")
        like.name = name
        self.pool.append(like)
        return like

    def safe(self, v: Var) -> tuple[str, float]:
        """An expression of v's values kept at or above 0.5 (for log, sqrt, division)."""
        return f"({v.name} * {v.name} + 0.5)", v.bound * v.bound + 0.5

    # -- expression makers: each returns (text, Var-properties) ------------------------------
    def unary(self, v: Var):
        op = self.rng.choice(UNARY)
        b, n = v.bound, v.name
        props = Var("", v.shape, ties=v.ties, contig=v.contig, grad=v.grad)
        if op in ("exp", "expm1"):
            arg = n if b <= 4 else f"tanh({n})"
            text, props.bound = f"{op}({arg})", math.exp(min(b, 4)) + 1
        elif op in ("log", "sqrt", "reciprocal", "log1p"):
            s, sb = self.safe(v)
            text, props.bound = f"{op}{s}", max(sb, 2.0)
        elif op == "neg":
            text, props.bound = f"-{n}", b
        elif op == "pow2":
            text, props.bound = f"{n} ** 2", b * b
        elif op == "pow3":
            text, props.bound = f"{n} ** 3", b ** 3
        elif op == "powhalf":
            s, sb = self.safe(v)
            text, props.bound = f"{s} ** 1.5", sb ** 1.5
        else:
            text, props.bound = f"{op}({n})", max(b, 1.0)
            props.ties = v.ties or op in ("relu",)
        return text, props

    def partner(self, v: Var) -> Var:
        """A variable broadcastable with v: an existing one, or a new input."""
        def fits(w):
            try:
                np.broadcast_shapes(v.shape, w.shape)
                return _numel(np.broadcast_shapes(v.shape, w.shape)) <= 48
            except ValueError:
                return False
        if self.rng.random() < 0.5:
            w = self.pick(lambda w: w is not v and fits(w))
            if w is not None:
                return w
        shape = list(v.shape)
        if shape and self.rng.random() < 0.4:
            shape = shape[self.rng.randint(0, len(shape)):]
        shape = [1 if self.rng.random() < 0.3 else s for s in shape]
        if self.rng.random() < 0.2 and len(shape) == len(v.shape) < 3:
            shape = [self.rng.randint(1, 3)] + shape
        return self.new_input(tuple(shape))

    def binary(self, v: Var):
        op = self.rng.choice(["+", "-", "*", "/", "maximum", "minimum", "where", "scalar", "clamp"])
        if op == "scalar":
            c = self.rng.choice(["2.0", "0.5", "3", "-1.5"])
            sym = self.rng.choice(["+", "-", "*", "/"])
            text = f"{c} {sym} {v.name}" if sym != "/" and self.rng.random() < 0.5 else f"{v.name} {sym} {c}"
            return text, Var("", v.shape, bound=v.bound * 3 + 3, ties=v.ties, contig=v.contig, grad=v.grad)
        if op == "clamp":
            return f"clamp({v.name}, -1.0, 1.0)", Var("", v.shape, 1.0, ties=True, contig=v.contig, grad=v.grad)
        w = self.partner(v)
        shape = tuple(np.broadcast_shapes(v.shape, w.shape))
        props = Var("", shape, ties=v.ties or w.ties or w is v, contig=v.contig and w.contig, grad=v.grad or w.grad)
        if op == "/":
            s, _ = self.safe(w)
            text, props.bound = f"{v.name} / {s}", v.bound * 2
        elif op == "*":
            text, props.bound = f"{v.name} * {w.name}", v.bound * w.bound
        elif op in ("+", "-"):
            text, props.bound = f"{v.name} {op} {w.name}", v.bound + w.bound
        elif op == "where":
            text, props.bound = f"where({v.name} > {w.name}, {v.name}, {w.name})", max(v.bound, w.bound)
        else:
            text, props.bound = f"{op}({v.name}, {w.name})", max(v.bound, w.bound)
        return text, props

    def reduction(self, v: Var):
        n = v.name
        ops = ["sum", "mean", "prod", "logsumexp", "softmax", "log_softmax"]
        if not v.ties:
            ops += ["max", "min"]
        op = self.rng.choice(ops)
        nd = len(v.shape)
        if nd == 0 or (op not in ("logsumexp", "softmax", "log_softmax") and self.rng.random() < 0.25):
            if op in ("logsumexp", "softmax", "log_softmax"):
                op = "sum"
            bound = {"sum": v.bound * _numel(v.shape), "prod": v.bound ** _numel(v.shape)}.get(op, v.bound)
            return f"{op}({n})", Var("", (), bound, ties=v.ties, grad=v.grad)
        dim = self.rng.randint(-nd, nd - 1)
        if op in ("softmax", "log_softmax"):
            bound = 1.0 if op == "softmax" else v.bound * 2 + 3
            return f"{op}({n}, {dim})", Var("", v.shape, bound, ties=v.ties, grad=v.grad)
        keep = self.rng.random() < 0.5
        shape = list(v.shape)
        if keep:
            shape[dim] = 1
        else:
            del shape[dim]
        size = v.shape[dim]
        bound = {"sum": v.bound * size, "prod": v.bound ** size, "logsumexp": v.bound + math.log(size) }.get(op, v.bound)
        if keep or op in ("max", "min") or self.rng.random() < 0.5:  # max(x, 0) is refused as ambiguous
            text = f"{op}({n}, dim={dim}, keepdim={keep})"
        else:
            text = f"{op}({n}, {dim})"
        return text, Var("", tuple(shape), bound, ties=v.ties, grad=v.grad)

    def matmul(self, v: Var):
        nd = len(v.shape)
        if nd == 0 or nd > 3:
            v = self.new_input(self.random_shape(3)[:3] or (3,))
            nd = len(v.shape)
        k = v.shape[-1]
        form = self.rng.random()
        if nd == 1:
            if form < 0.4:
                w = self.new_input((k,))
                f = self.rng.choice(["{a} @ {b}", "dot({a}, {b})", "matmul({a}, {b})"])
                shape = ()
            elif form < 0.7:
                w = self.new_input((k, self.rng.randint(1, 3)))
                f, shape = "{a} @ {b}", (w.shape[1],)
            else:  # matrix @ vector
                w = self.new_input((self.rng.randint(1, 3), k))
                f = self.rng.choice(["{b} @ {a}", "mv({b}, {a})"])
                shape = (w.shape[0],)
        elif nd == 2:
            if form < 0.6:
                w = self.new_input((k, self.rng.randint(1, 3)))
                f = self.rng.choice(["{a} @ {b}", "mm({a}, {b})", "matmul({a}, {b})"])
                shape = (v.shape[0], w.shape[1])
            else:
                w = self.new_input((k,))
                f = self.rng.choice(["{a} @ {b}", "mv({a}, {b})"])
                shape = (v.shape[0],)
        else:
            if form < 0.5:
                w = self.new_input((v.shape[0], k, self.rng.randint(1, 3)))
                f = self.rng.choice(["{a} @ {b}", "bmm({a}, {b})"])
            else:
                w = self.new_input((k, self.rng.randint(1, 3)))
                f = "{a} @ {b}"
            shape = (v.shape[0], v.shape[1], w.shape[-1])
        props = Var("", shape, bound=v.bound * w.bound * k, ties=v.ties, grad=True)
        return f.format(a=v.name, b=w.name), props

    def index(self, v: Var):
        nd = len(v.shape)
        if nd == 0:
            v = self.new_input((self.rng.randint(2, 4), self.rng.randint(1, 3)))
            nd = 2
        s0 = v.shape[0]
        r = self.rng
        forms = ["int", "slice", "list", "step"]
        if nd >= 2:
            forms += ["col", "int_slice", "col_list"]
        if nd >= 3:
            forms += ["mixed"]
        if nd >= 3 and "mixed_index" in self.flags:
            forms = ["mixed"]
        form = r.choice(forms)
        i = r.randint(-s0, s0 - 1)
        a = r.randint(0, s0 - 1)
        copied = False
        if form == "int":
            idx = f"{i}"
        elif form == "slice":
            idx = r.choice([f"{a}:", f":{a + 1}", f"{a}:{s0}", f"-{s0 - a}:"])
        elif form == "step":
            idx = r.choice(["::2", f"{a}::2"])
        elif form == "list":
            idx = "[" + ", ".join(str(r.randint(-s0, s0 - 1)) for _ in range(r.randint(1, 3))) + "]"
            copied = True
        elif form == "col":
            idx = f":, {r.randint(-v.shape[1], v.shape[1] - 1)}"
        elif form == "int_slice":
            idx = f"{i}, {r.randint(0, v.shape[1] - 1)}:"
        elif form == "col_list":
            idx = ":, [" + ", ".join(str(r.randint(0, v.shape[1] - 1)) for _ in range(r.randint(1, 3))) + "]"
            copied = True
        else:  # mixed: int, slice, list
            idx = f"{i}, {r.randint(0, v.shape[1] - 1)}:, [" + ", ".join(
                str(r.randint(0, v.shape[2] - 1)) for _ in range(2)) + "]"
        # PyTorch's result shape: an int index is applied first, then the rest (as NumPy for these forms)
        probe = np.zeros(v.shape)
        if form == "mixed":
            first, rest = idx.split(", ", 1)
            shape = probe[int(first)][eval(f"np.s_[{rest}]")].shape  # noqa: S307 - our own index text
        else:
            shape = probe[eval(f"np.s_[{idx}]")].shape  # noqa: S307
        ties = v.ties or (copied and len(set(idx)) != len(idx))
        return f"{v.name}[{idx}]", Var("", tuple(shape), v.bound, ties=v.ties or copied, contig=copied,
                                         copied=copied, grad=v.grad)

    def shape_op(self, v: Var):
        r = self.rng
        nd = len(v.shape)
        n = v.name
        ops = ["unsqueeze", "cat", "stack"]
        ops += ["reshape", "flatten"]
        if v.contig:
            ops.append("view")
        if nd >= 1:
            ops += ["flip", "narrow", "squeeze"]
        if nd >= 2:
            ops += ["transpose", "permute", "t" if nd == 2 else "T"]
        if "view_after_copy" in self.flags:
            ops = ["view_after"]
        if "narrow_negative" in self.flags:
            ops = ["narrow"]
            if nd == 0:
                v = self.new_input((r.randint(2, 4), r.randint(1, 3)))
                n, nd = v.name, 2
        if "reshape_alias" in self.flags:
            if nd < 2:
                v = self.new_input((r.randint(2, 3), r.randint(2, 3)))
                n, nd = v.name, 2
            shape = (v.shape[1], v.shape[0]) + v.shape[2:]
            return f"reshape(transpose({n}, 0, 1), {shape!r})", Var("", shape, v.bound, ties=v.ties)
        op = r.choice(ops)
        props = Var("", v.shape, v.bound, ties=v.ties, contig=False, grad=v.grad)
        if op in ("reshape", "view", "view_after"):
            src = n
            if op == "view_after":
                kind = r.choice(["flip", "index", "cat_t"])
                if nd < 2 or v.shape[0] < 2:  # x[[1, 0]] needs two rows
                    v = self.new_input((r.randint(2, 3), r.randint(2, 3)))
                    nd, n = 2, v.name
                if kind == "flip":
                    src = f"flip({n}, (0,))"
                elif kind == "index":
                    src = f"{n}[[1, 0]]"
                    v = Var("", (2,) + v.shape[1:])
                else:
                    src = f"cat([{n}.T, {n}.T], 0)"
                    v = Var("", (2 * v.shape[1], v.shape[0]) + v.shape[2:])
                op = "view"
            size = _numel(v.shape)
            dims = [d for d in range(1, size + 1) if size % d == 0]
            first = r.choice(dims)
            new = (first, size // first) if r.random() < 0.6 else (size,)
            if r.random() < 0.3:
                new = (-1,) + new[1:]
            props.shape = (first, size // first) if len(new) == 2 else (size,)
            props.contig = True
            return f"{op}({src}, {new!r})", props
        if op == "unsqueeze":
            d = r.randint(-nd - 1, nd)
            shape = list(v.shape)
            shape.insert(d if d >= 0 else nd + 1 + d, 1)
            props.shape, props.contig = tuple(shape), v.contig
            return f"unsqueeze({n}, {d})", props
        if op == "squeeze":
            ones = [d for d, s in enumerate(v.shape) if s == 1]
            props.contig = v.contig
            if ones and r.random() < 0.6:
                d = r.choice(ones)
                props.shape = v.shape[:d] + v.shape[d + 1:]
                return f"squeeze({n}, {d})", props
            props.shape = tuple(s for s in v.shape if s != 1)
            return f"squeeze({n})", props
        if op == "flatten":
            props.shape, props.contig = (_numel(v.shape),), True
            return f"flatten({n})", props
        if op in ("cat", "stack"):
            w = v if r.random() < 0.3 else self.new_input(v.shape)
            props.ties = v.ties or w is v
            props.contig, props.copied = True, True
            props.grad = True
            if op == "stack":
                d = r.randint(0, nd)
                shape = list(v.shape)
                shape.insert(d, 2)
                props.shape = tuple(shape)
                return f"stack([{n}, {w.name}], {d})", props
            if nd == 0:
                return f"stack([{n}, {w.name}])", Var("", (2,), v.bound, ties=props.ties)
            d = r.randint(0, nd - 1)
            shape = list(v.shape)
            shape[d] *= 2
            props.shape = tuple(shape)
            return f"cat([{n}, {w.name}], {d})", props
        if op == "flip":
            d = r.randint(0, nd - 1)
            props.contig, props.copied = True, True
            return f"flip({n}, ({d},))", props
        if op == "narrow":
            d = r.randint(0, nd - 1)
            size = v.shape[d]
            length = r.randint(1, size)
            start = r.randint(0, size - length)
            if "narrow_negative" in self.flags or r.random() < 0.3:
                start -= size
            shape = list(v.shape)
            shape[d] = length
            props.shape = tuple(shape)
            return f"narrow({n}, {d}, {start}, {length})", props
        if op == "transpose":
            d0, d1 = r.sample(range(nd), 2)
            shape = list(v.shape)
            shape[d0], shape[d1] = shape[d1], shape[d0]
            props.shape = tuple(shape)
            return f"transpose({n}, {d0}, {d1})", props
        if op == "permute":
            perm = list(range(nd))
            r.shuffle(perm)
            props.shape = tuple(v.shape[p] for p in perm)
            return f"permute({n}, {tuple(perm)!r})", props
        if op == "t":
            props.shape = v.shape[::-1]
            return f"t({n})", props
        props.shape = v.shape[::-1]  # .T on 3-D: PyTorch deprecates it; use permute
        perm = tuple(range(nd))[::-1]
        return f"permute({n}, {perm!r})", props

    # -- statements ----------------------------------------------------------------------------
    def any_expr(self, v):
        maker = self.rng.choice([self.unary, self.unary, self.binary, self.reduction, self.matmul,
                                 self.index, self.shape_op])
        return maker(v)

    def statement(self):
        r = self.rng
        v = self.pick()
        focus = {"elementwise": [self.unary, self.binary], "reduction": [self.reduction],
                 "matmul": [self.matmul], "indexing": [self.index], "shape": [self.shape_op],
                 "second_order": [self.unary, self.binary, self.reduction, self.matmul]}
        cat = self.category
        if cat == "control" and r.random() < 0.6:
            return self.control(v)
        if cat == "function" and r.random() < 0.6:
            return self.function(v)
        if cat == "detach" and r.random() < 0.5:
            return self.detach(v)
        if cat in focus and r.random() < 0.7:
            text, props = r.choice(focus[cat])(v)
        else:
            text, props = self.any_expr(v)
        return self.emit(text, props)

    def control(self, v):
        r = self.rng
        kind = r.choice(["if", "elif", "ifexpr", "for"])
        a, pa = self.unary(v)
        b, pb = self.unary(v)
        props = pa
        props.bound = max(pa.bound, pb.bound)
        props.ties = pa.ties or pb.ties
        props.contig = False
        name = f"v{self.count}"
        cond = f"sum({v.name}) > {r.choice(['0.0', '1.0', '-1.0'])}"
        if props.bound > 50:
            a, b, props.bound = f"tanh({a})", f"tanh({b})", 1.0
        if kind == "ifexpr":
            return self.emit(f"({a}) if {cond} else ({b})", props)
        self.count += 1
        if kind == "if":
            self.lines += [f"if {cond}:", f"    {name} = {a}", "else:", f"    {name} = {b}"]
        elif kind == "elif":
            c, _ = self.unary(v)
            if "tanh" in a and props.bound == 1.0:
                c = f"tanh({c})"
            self.lines += [f"if {cond}:", f"    {name} = {a}", f"elif mean({v.name}) < 0.5:", f"    {name} = {b}",
                           "else:", f"    {name} = {c}" if props.bound <= 50 else f"    {name} = tanh({c})"]
        else:
            steps = r.randint(1, 3)
            self.lines += [f"{name} = {a}", f"for i in range({steps}):",
                           f"    {name} = tanh({name}) * 0.5 + {b} * i"]
            props.bound = 1 + props.bound * 3
        props.name = name
        self.pool.append(props)
        return props

    def function(self, v):
        r = self.rng
        fname = f"f{self.functions}"
        self.functions += 1
        u = Var("u", v.shape, v.bound, ties=v.ties, contig=v.contig, grad=v.grad)
        a, pa = self.unary(u)
        b, pb = self.unary(u)
        lines = [f"def {fname}(u, k=0.5):", f"    w = {a} * k"]
        if r.random() < 0.5:
            lines += [f"    if sum(u) > 0.0:", f"        return w + {b}"]
        lines += ["    return w - u"]
        self.lines += lines
        call = r.choice([f"{fname}({v.name})", f"{fname}({v.name}, 2.0)", f"{fname}({v.name}, k=-1.5)"])
        props = Var("", v.shape, (pa.bound + pb.bound + v.bound) * 2, ties=pa.ties or pb.ties, contig=False,
                    grad=v.grad)
        return self.emit(call, props)

    def detach(self, v):
        r = self.rng
        kind = r.choice(["detach", "method", "no_grad"])
        a, pa = self.unary(v)
        pa.contig = False
        if kind == "no_grad":
            name = f"v{self.count}"
            self.count += 1
            self.lines += ["with no_grad:", f"    {name} = {a}"]
            if pa.bound > 50:
                self.lines[-1] = f"    {name} = tanh({a})"
                pa.bound = 1.0
            pa.name, pa.grad = name, False
            self.pool.append(pa)
            return pa
        text = f"detach({v.name})" if kind == "detach" else f"{v.name}.detach()"
        w = self.partner(v)
        pa.shape = tuple(np.broadcast_shapes(v.shape, w.shape))
        pa.bound = v.bound * w.bound
        pa.grad = w.grad
        return self.emit(f"{text} * {w.name}", pa)

    def build(self, statements: int) -> RandomProgram:
        r = self.rng
        self.new_input(self.random_shape(3))
        if r.random() < 0.5:
            self.new_input(self.random_shape(2))
        for _ in range(statements):
            self.statement()
        out = self.pool[-1]
        if not out.name.startswith("v"):
            out = self.emit(f"{out.name} * 1.5", Var("", out.shape, out.bound * 1.5, out.ties))
        self.lines.append(out.name)
        weights = np.round(np.array([r.uniform(-1, 1) for _ in range(_numel(out.shape))]), 3).reshape(out.shape)
        text = "\n".join(self.lines) + "\n"
        used = {k: v for k, v in self.inputs.items() if re.search(rf"\b{k}\b", text)}
        return RandomProgram(text, used, out.name, self.category,
                       "float32" if self.category == "float32" else "float64", weights.tolist())


def tensor_program(rng, category=None, flags=frozenset(), statements=None) -> RandomProgram:
    if category is None:
        category = rng.choice(TENSOR_CATEGORIES)
    gen = TensorGen(rng, flags, category)
    n = statements if statements is not None else rng.randint(1, 5)
    return gen.build(n)
