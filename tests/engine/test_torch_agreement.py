"""PyTorch agreement: behaviours that third-party autograd tests rely on, each run
with PyTorch and with autodiff and compared (values, gradients, grad_fn names, error texts and
warnings), as in test_torch_oracle.py. Skipped when PyTorch is not installed."""

import math
import warnings

import pytest

import autodiff

from .test_torch_oracle import assert_same, outcome

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.torch


@pytest.fixture(scope="module", autouse=True)
def _oracle_in_float64(torch_in_float64):  # tests/conftest.py
    yield


def same_as_pytorch(snippet):
    assert_same(outcome(snippet, autodiff), outcome(snippet, torch))


def fails_as_pytorch(snippet):
    theirs = outcome(snippet, torch)
    assert theirs[0] == "error", "the snippet must fail in PyTorch"
    assert_same(outcome(snippet, autodiff), theirs)


def matrix(lib):
    return lib.tensor([[1.0, -2.0, 3.0], [0.5, 4.0, -1.0]], requires_grad=True)


# -- axis= and keepdims=, NumPy's names that PyTorch's argument parser accepts ---------------------------

AXIS = {
    "cumsum": lambda lib, x: lib.cumsum(x, axis=0),
    "cumsum_method": lambda lib, x: x.cumsum(axis=1),
    "sum_keepdims": lambda lib, x: lib.sum(x, axis=1, keepdims=True),
    "mean_method": lambda lib, x: x.mean(axis=0),
    "prod": lambda lib, x: x.prod(axis=1),
    "max": lambda lib, x: x.max(axis=0).values,
    "min": lambda lib, x: lib.min(x, axis=1, keepdims=True).values,
    "argmax": lambda lib, x: x.argmax(axis=1).double(),
    "logsumexp": lambda lib, x: lib.logsumexp(x, axis=1),
    "softmax": lambda lib, x: lib.softmax(x, axis=0),
    "log_softmax": lambda lib, x: x.log_softmax(axis=1),
    "cat": lambda lib, x: lib.cat([x, x], axis=1),
    "stack": lambda lib, x: lib.stack([x, x], axis=1),
    "unsqueeze": lambda lib, x: x.unsqueeze(axis=1),
    "squeeze": lambda lib, x: lib.squeeze(x[None], axis=0),
    "select": lambda lib, x: lib.select(x, axis=1, index=2),
    "narrow": lambda lib, x: x.narrow(axis=1, start=1, length=2),
}


@pytest.mark.parametrize("key", sorted(AXIS))
def test_axis_is_dim_and_keepdims_is_keepdim(key):
    def snippet(lib):
        x = matrix(lib)
        out = AXIS[key](lib, x)
        (out * out).sum().backward()
        return [out, x.grad, type(out.grad_fn).__name__ if out.grad_fn else None]

    same_as_pytorch(snippet)


def test_axis_and_dim_together_is_refused_as_pytorch_refuses_it():
    fails_as_pytorch(lambda lib: lib.cumsum(matrix(lib), axis=0, dim=0))
    fails_as_pytorch(lambda lib: matrix(lib).sum(axis=0, dim=1))


# -- autograd.functional: what was given where a tensor belongs ------------------------------------------

FUNCTIONAL_MISUSE = {
    "jacobian_input_at_index": lambda F, x: F.jacobian(lambda a, b: a * b, (x, 2)),
    "jacobian_input": lambda F, x: F.jacobian(lambda a: a, 2.0),
    "vjp_input_at_index": lambda F, x: F.vjp(lambda a, b: a * b, (x, 2)),
    "vjp_v": lambda F, x: F.vjp(lambda a: a, x, 3),
    "hessian_input_at_index": lambda F, x: F.hessian(lambda a, b: (a * b).sum(), (x, [1.0])),
    "jacobian_output": lambda F, x: F.jacobian(lambda a: 3, x),
    "jacobian_output_at_index": lambda F, x: F.jacobian(lambda a: (a, 3), x),
}


@pytest.mark.parametrize("key", sorted(FUNCTIONAL_MISUSE))
def test_functional_names_the_value_that_is_not_a_tensor(key):
    fails_as_pytorch(lambda lib: FUNCTIONAL_MISUSE[key](lib.autograd.functional, lib.ones(2)))


# -- creation and grad modes ------------------------------------------------------------------------------

@pytest.mark.parametrize("size", [[4, 2], (3,)])
def test_randint_with_high_and_a_size(size):
    def snippet(lib):
        values = lib.randint(2, size)
        return [list(values.shape), str(values.dtype), bool(((values >= 0) & (values < 2)).all())]

    same_as_pytorch(snippet)


@pytest.mark.parametrize("decorator", ["no_grad()", "no_grad", "enable_grad()"])
def test_grad_mode_decorating_a_class_warns_and_builds_it_in_the_mode(decorator):
    def snippet(lib):
        class Made:
            def __init__(self, x):
                self.y = x * 2

        mode = getattr(lib, decorator.rstrip("()"))
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            made = (mode()(Made) if decorator.endswith("()") else mode(Made))(lib.ones(1, requires_grad=True))
        return [made.y.requires_grad, [(w.category.__name__, str(w.message)) for w in caught]]

    same_as_pytorch(snippet)


# -- einsum in sublist form -------------------------------------------------------------------------------

SUBLISTS = {
    "matmul": lambda a, b: (a, [0, 1], b, [1, 2], [0, 2]),
    "implicit_output": lambda a, b: (a, [30, 1], b, [1, 2]),  # 'e' after 'C': PyTorch's alphabetical order
    "ellipsis": lambda a, b: (a, [..., 1], b, [1, 2], [..., 2]),
    "trace_of_one": lambda a, b: (a @ b, [51, 51]),
}


@pytest.mark.parametrize("key", sorted(SUBLISTS))
def test_einsum_sublist_form(key):
    def snippet(lib):
        a = lib.tensor([[1.0, 2.0, -1.0], [3.0, 4.0, 0.5]], requires_grad=True)
        b = lib.tensor([[1.0, 0.0], [2.0, 1.0], [-3.0, 2.0]], requires_grad=True)
        out = lib.einsum(*SUBLISTS[key](a, b))
        (out * out).sum().backward()
        return [out, a.grad, b.grad, type(out.grad_fn).__name__]

    same_as_pytorch(snippet)


@pytest.mark.parametrize("args", [lambda lib: (lib.ones(2),), lambda lib: (lib.ones(2), [52])])
def test_einsum_sublist_errors(args):
    fails_as_pytorch(lambda lib: lib.einsum(*args(lib)))


# -- backward twice through indexing ----------------------------------------------------------------------

def _assign(key, values):
    def assign(lib, b, c):
        c[key(lib)] = values(b)
    return assign


def _look_up(key):
    def look_up(lib, b, c):
        return b[key(lib)]
    return look_up


# CopySlices lets go of its node, and IndexBackward0 of its index tensors: a second backward
# without retain_graph is PyTorch's error; basic indexing saves nothing and runs twice.
TWICE = {
    "assign_list_from_list": _assign(lambda lib: [1, 2], lambda b: b[[1, 1]]),
    "assign_int": _assign(lambda lib: 0, lambda b: b[1]),
    "assign_slice": _assign(lambda lib: slice(1, None), lambda b: b[1:]),
    "assign_mask": _assign(lambda lib: lib.tensor([True, False, True]), lambda b: b[:2]),
    "look_up_list": _look_up(lambda lib: [0, 0]),
    "look_up_mask": _look_up(lambda lib: lib.tensor([True, False, True])),
    "look_up_basic": _look_up(lambda lib: (None, 1)),
}


@pytest.mark.parametrize("key", sorted(TWICE))
def test_backward_twice_through_indexing(key):
    def snippet(lib):
        b = lib.ones(3, requires_grad=True)
        c = lib.zeros(3)
        looked_up = TWICE[key](lib, b, c)
        total = (c if looked_up is None else looked_up).sum()
        total.backward()
        first = b.grad.clone()
        try:
            total.backward()
        except RuntimeError as exc:
            return [first, str(exc)]
        return [first, b.grad]

    same_as_pytorch(snippet)


def test_backward_twice_through_indexing_with_retain_graph():
    def snippet(lib):
        b = lib.ones(3, requires_grad=True)
        c = lib.zeros(3)
        c[[1, 2]] = b[[1, 1]]
        total = (c * c).sum()
        total.backward(retain_graph=True)
        total.backward()
        return b.grad

    same_as_pytorch(snippet)


# -- hook order -------------------------------------------------------------------------------------------

def _leaf_with_hooks(lib, log):
    a = lib.ones(2, requires_grad=True)
    a.register_hook(lambda g: log.append("tensor hook 1"))
    b = a * 2
    accumulate = b.grad_fn.next_functions[0][0]
    accumulate.register_prehook(lambda grads: log.append(("AccumulateGrad pre-hook", grads[0])))
    accumulate.register_hook(lambda grad_inputs, grad_outputs: log.append(("AccumulateGrad hook", grad_inputs,
                                                                          grad_outputs)))
    a.register_hook(lambda g: (log.append("tensor hook 2"), g * 10)[1])
    return a, b


LEAF_RUNS = {
    "backward": lambda lib, a, b, create_graph: b.sum().backward(create_graph=create_graph),
    "backward_inputs": lambda lib, a, b, create_graph: b.sum().backward(inputs=[a], create_graph=create_graph),
    "grad": lambda lib, a, b, create_graph: lib.autograd.grad(b.sum(), a, create_graph=create_graph),
    "leaf_as_root": lambda lib, a, b, create_graph: a.backward(lib.ones(2), create_graph=create_graph),
}


@pytest.mark.filterwarnings("ignore:Using backward\\(\\) with create_graph=True")
@pytest.mark.parametrize("create_graph", [False, True], ids=["lean", "recorded"])
@pytest.mark.parametrize("key", sorted(LEAF_RUNS))
def test_accumulate_grad_hooks_run_after_the_leafs_tensor_hooks(key, create_graph):
    """Tensor hooks, AccumulateGrad's pre-hooks, .grad, its hooks; autograd.grad runs no AccumulateGrad."""
    def snippet(lib):
        log = []
        a, b = _leaf_with_hooks(lib, log)
        result = LEAF_RUNS[key](lib, a, b, create_graph)
        return [log, a.grad, result]

    same_as_pytorch(snippet)


@pytest.mark.parametrize("inputs", ["b", "b_and_a"])
def test_grad_with_respect_to_an_intermediate_does_not_run_its_node(inputs):
    """grad(c, inputs=b) takes b's gradient as it arrives: b's tensor hooks run, b.grad_fn and its
    hooks do not, and its saved values stay for a later backward (unless a lies beyond it)."""
    def snippet(lib):
        log = []
        a = lib.ones(2, requires_grad=True)
        b = a * a
        c = b * 3
        b.grad_fn.register_prehook(lambda grads: log.append("b pre-hook"))
        b.grad_fn.register_hook(lambda grad_inputs, grad_outputs: log.append("b hook"))
        b.register_hook(lambda g: (log.append("b tensor hook"), g * 10)[1])
        log.append(lib.autograd.grad(c.sum(), inputs=b if inputs == "b" else [b, a]))
        try:
            (b * 1).sum().backward()
        except RuntimeError as exc:
            log.append(str(exc))
        return [log, a.grad]

    same_as_pytorch(snippet)


TARGET_RUNS = {
    "grad_b_and_a": lambda lib, a, b, c: lib.autograd.grad(c.sum(), inputs=[b, a]),
    "grad_b": lambda lib, a, b, c: lib.autograd.grad(c.sum(), inputs=[b]),
    "backward_inputs_b": lambda lib, a, b, c: c.sum().backward(inputs=[b]),
    "backward_inputs_b_and_a": lambda lib, a, b, c: c.sum().backward(inputs=[b, a]),
}


@pytest.mark.parametrize("node_pre_hook", [False, True])
@pytest.mark.parametrize("key", sorted(TARGET_RUNS))
def test_where_an_intermediate_inputs_gradient_is_taken(key, node_pre_hook):
    """Against the tensor's hook and its node's pre-hook, each changing the gradient."""
    def snippet(lib):
        a = lib.ones(2, requires_grad=True)
        b = a * a
        c = b * 3
        if node_pre_hook:
            b.grad_fn.register_prehook(lambda grads: (grads[0] * 100,))
        b.register_hook(lambda g: g * 10)
        return [TARGET_RUNS[key](lib, a, b, c), b.grad, a.grad]

    same_as_pytorch(snippet)


def test_gradcheck_is_the_function_whichever_name_loads_its_module():
    """`autograd.gradgradcheck` loads the module gradcheck.py: `autograd.gradcheck` stays the function."""
    import subprocess
    import sys

    code = ("import autodiff, torch; autodiff.autograd.gradgradcheck; "
            "print(callable(autodiff.autograd.gradcheck), callable(torch.autograd.gradcheck))")
    shown = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert shown.split() == ["True", "True"]


# -- copy_ ------------------------------------------------------------------------------------------------

COPIES = {  # the source copied into a 2x2 tensor, from b = [1, 2, 3]
    "same_shape": lambda lib, b: lib.stack([b[:2], b[1:]]) * 2,
    "broadcast": lambda lib, b: b[:2],
    "to_float32": lambda lib, b: lib.stack([b[:2], b[1:]]).to(lib.float32),
}


@pytest.mark.parametrize("key", sorted(COPIES))
def test_copy_records_copy_backwards(key):
    """x.copy_(src): one CopyBackwards node, no gradient for the overwritten value, src's summed back."""
    def snippet(lib):
        b = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        x = lib.zeros(2, 2, requires_grad=True)
        target = x * 1
        target.copy_(COPIES[key](lib, b))
        (target * lib.tensor([[1.0, 2.0], [3.0, 4.0]])).sum().backward()
        return [target, type(target.grad_fn).__name__, [type(n).__name__ for n, _ in target.grad_fn.next_functions],
                x.grad, b.grad]

    same_as_pytorch(snippet)


# -- custom Functions -------------------------------------------------------------------------------------

def _functions(lib):
    class NonTensorOutputs(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2, 3, "text"

        @staticmethod
        def backward(ctx, grad, grad_of_number, grad_of_text):
            ctx.seen = (grad_of_number, grad_of_text)
            return grad * 2

    class SameTensorTwice(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            y = x * 2
            return y, y

        @staticmethod
        def backward(ctx, first, second):
            ctx.seen = (first, second)
            return first + second

    class OnceDifferentiable(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x, w):
            ctx.save_for_backward(x, w)
            return x * x * w

        @staticmethod
        @lib.autograd.function.once_differentiable
        def backward(ctx, grad):
            x, w = ctx.saved_tensors
            return 2 * x * w * grad, None

    return NonTensorOutputs, SameTensorTwice, OnceDifferentiable


def test_custom_function_non_tensor_outputs_get_none_gradients():
    def snippet(lib):
        NonTensorOutputs, _, _ = _functions(lib)
        x = lib.ones(2, requires_grad=True)
        y, number, text = NonTensorOutputs.apply(x)
        y.sum().backward()
        return [number, text, x.grad, y.grad_fn.seen]

    same_as_pytorch(snippet)


def test_custom_function_returning_one_tensor_twice():
    def snippet(lib):
        _, SameTensorTwice, _ = _functions(lib)
        x = lib.ones(2, requires_grad=True)
        a, b = SameTensorTwice.apply(x)
        (a * 3 + b).sum().backward()
        return [a is b, a.output_nr, type(a.grad_fn).__name__, x.grad, list(a.grad_fn.seen)]

    same_as_pytorch(snippet)


def test_custom_function_returning_its_input_twice():
    """Two results, each with its own gradient (PyTorch makes each a view of the input): merged
    into one, the first one's gradient reached backward as zero, a silently wrong x.grad."""
    def snippet(lib):
        class InputTwice(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x, x

            @staticmethod
            def backward(ctx, ga, gb):
                return ga + 10 * gb

        x = lib.tensor([1.0, 2.0], requires_grad=True)
        a, b = InputTwice.apply(x)
        (a.sum() * 2 + b.sum() * 3).backward()
        return [a is b, a is x, a.output_nr, b.output_nr, x.grad]

    same_as_pytorch(snippet)


def test_once_differentiable_results_come_out_of_one_error_node():
    def snippet(lib):
        _, _, OnceDifferentiable = _functions(lib)
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        w = lib.tensor(3.0)
        y = OnceDifferentiable.apply(x, w)
        (g,) = lib.autograd.grad((y * y).sum(), x, create_graph=True)
        found = [g, type(g.grad_fn).__name__, g.output_nr,
                 [(type(node).__name__, nr) for node, nr in g.grad_fn.next_functions]]
        try:
            g.sum().backward()
        except RuntimeError as exc:
            found.append(str(exc))
        return found

    same_as_pytorch(snippet)


def test_save_for_backward_names_the_argument_that_is_not_a_tensor():
    def snippet(lib):
        class Saves(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x, 2.0)
                return x

            @staticmethod
            def backward(ctx, grad):
                return grad

        return Saves.apply(lib.ones(1, requires_grad=True))

    fails_as_pytorch(snippet)


# -- gradcheck's checks beyond the Jacobian ---------------------------------------------------------------

def _checked_functions(lib):
    class NotReentrant(lib.autograd.Function):
        calls = 0

        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, grad):
            NotReentrant.calls += 1  # a little more each time: the Jacobian itself passes
            return grad * 2 + NotReentrant.calls * 1e-9

    class FailsWithoutGradient(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.set_materialize_grads(False)
            return x * 2

        @staticmethod
        def backward(ctx, grad):
            if grad is None:
                raise RuntimeError("no gradient arrived")
            return grad * 2

    class NotMultipliedByGradient(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, grad):
            return grad * 2 + (grad == 0).all() * 1.0

    return {"not_reentrant": NotReentrant, "fails_without_gradient": FailsWithoutGradient,
            "not_multiplied_by_gradient": NotMultipliedByGradient}


GRADCHECKS = {
    "not_reentrant": {},
    "not_reentrant_fast": {"fast_mode": True},
    "not_reentrant_within_nondet_tol": {"nondet_tol": 1e-6},  # then the zero-gradient check fails it
    "fails_without_gradient": {},
    "not_multiplied_by_gradient": {},
}


@pytest.mark.parametrize("key", sorted(GRADCHECKS))
@pytest.mark.parametrize("raise_exception", [True, False])
def test_gradcheck_checks_as_pytorch(key, raise_exception):
    def snippet(lib):
        function = _checked_functions(lib)[key.replace("_fast", "").replace("_within_nondet_tol", "")]
        x = lib.tensor([1.0, 2.0], dtype=lib.float64, requires_grad=True)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                passed = lib.autograd.gradcheck(function.apply, (x,), raise_exception=raise_exception,
                                                **GRADCHECKS[key])
            except RuntimeError as exc:  # GradcheckError; PyTorch's note after the first paragraph is its own
                return ["raised", str(exc).split("\n\n")[0], type(exc.__cause__).__name__]
        return [passed, [w.category.__name__ for w in caught]]

    same_as_pytorch(snippet)


def test_gradcheck_skips_the_undefined_gradient_check_on_request():
    def snippet(lib):
        function = _checked_functions(lib)["fails_without_gradient"]
        x = lib.tensor([1.0, 2.0], dtype=lib.float64, requires_grad=True)
        return lib.autograd.gradcheck(function.apply, (x,), check_undefined_grad=False)

    same_as_pytorch(snippet)


def test_gradgradcheck_finds_a_backward_that_is_not_reentrant():
    def snippet(lib):
        function = _checked_functions(lib)["not_reentrant"]
        x = lib.tensor([1.0, 2.0], dtype=lib.float64, requires_grad=True)
        try:
            return lib.autograd.gradgradcheck(lambda t: function.apply(t) * t, (x,))
        except RuntimeError as exc:
            return str(exc).split("\n\n")[0]

    same_as_pytorch(snippet)


def _doubled_in_place(lib):
    class DoubledInPlace(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            x.mul_(2)
            ctx.mark_dirty(x)
            return x

        @staticmethod
        def backward(ctx, grad):
            return grad * 2

    return DoubledInPlace


def test_mark_dirty_makes_the_input_itself_the_output():
    """The changed input is the result, its history rebased onto the Function's node: a later
    use of it differentiates through the Function (before, through its old node: a wrong gradient)."""
    def snippet(lib):
        a = lib.ones(2, requires_grad=True)
        b = a * 1
        version = b._version
        c = _doubled_in_place(lib).apply(b)
        found = [c is b, type(b.grad_fn).__name__, b._version - version]
        (b * 3).sum().backward()
        return found + [a.grad]

    same_as_pytorch(snippet)


@pytest.mark.parametrize("case", ["leaf", "not_returned", "saved_before"])
def test_mark_dirty_errors(case):
    def snippet(lib):
        a = lib.ones(2, requires_grad=True)
        if case == "leaf":
            return _doubled_in_place(lib).apply(a)
        b = a * 1
        if case == "saved_before":
            product = b * b
            _doubled_in_place(lib).apply(b)
            return product.sum().backward()

        class NotReturned(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                x.mul_(2)
                ctx.mark_dirty(x)
                return x * 1

            @staticmethod
            def backward(ctx, grad):
                return grad

        return NotReturned.apply(b)

    fails_as_pytorch(snippet)


@pytest.mark.parametrize("name", ["elu", "leaky_relu", "hardtanh", "silu", "mish"])
def test_activations_in_place_record_pytorchs_nodes(name):
    def snippet(lib):
        functional = lib.nn.functional
        x = lib.tensor([1.5, -2.0, 0.25], requires_grad=True)
        y = getattr(functional, name)(x * 1, inplace=True)
        y.sum().backward()
        return y.grad_fn.name(), y, x.grad

    same_as_pytorch(snippet)


# -- statistics at their kinks, and their errors ------------------------------------------------


def _grads_of(lib, make, values, second=True):
    """A function's value, grad_fn, gradient and (along ones) second derivative at `values`."""
    x = lib.tensor(values, requires_grad=True)
    out = make(lib, x)
    (g,) = lib.autograd.grad(out.sum(), [x], create_graph=second)
    found = [out.detach(), out.grad_fn.name(), g.detach()]
    if second and g.requires_grad:
        (second,) = lib.autograd.grad(g.sum(), [x], allow_unused=True)
        found.append(None if second is None else second + lib.zeros_like(x))  # PyTorch's zero tensors as zeros
    return found


KINKS = {
    "amax ties share": (lambda lib, x: lib.amax(x, 1), [[1.0, 3.0, 3.0], [2.0, 2.0, 2.0]]),
    "amin ties, all dims": (lambda lib, x: x.amin(), [[1.0, 0.5, 3.0], [0.5, 2.0, 0.5]]),
    "amax ties, keepdim": (lambda lib, x: lib.amax(x, (0,), True), [[1.0, 3.0], [1.0, 2.0]]),
    "norm at a zero vector": (lambda lib, x: lib.norm(x, dim=1), [[0.0, 0.0, 0.0], [3.0, 0.0, -4.0]]),
    "norm 3 at a zero vector": (lambda lib, x: lib.norm(x, 3, 1), [[0.0, 0.0], [1.0, -2.0]]),
    "norm inf ties": (lambda lib, x: lib.norm(x, float("inf")), [[2.0, -2.0], [1.0, 0.5]]),
    "norm 1 at zero": (lambda lib, x: lib.norm(x, 1), [0.0, -1.0, 2.0]),
    "norm 0.5 at zero": (lambda lib, x: lib.norm(x, 0.5), [0.0, 1.0, 2.0]),
    "std of equal values": (lambda lib, x: lib.std(x, 1), [[2.0, 2.0, 2.0], [1.0, 2.0, 4.0]]),
    "var of one value": (lambda lib, x: lib.var(x), [3.0]),
    "cumprod with zeros": (lambda lib, x: lib.cumprod(x, 0), [[0.0, 2.0], [0.0, 0.0], [3.0, 0.5]]),
    "logcumsumexp with -inf": (lambda lib, x: lib.logcumsumexp(x, 0), [float("-inf"), 0.5, 1.0]),
}


@pytest.mark.parametrize("case", KINKS)
def test_statistics_at_their_kinks_are_pytorchs(case):
    make, values = KINKS[case]
    second = case not in ("var of one value", "logcumsumexp with -inf")  # nan second derivatives, in both
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        same_as_pytorch(lambda lib: _grads_of(lib, make, values, second))


STATISTICS_ERRORS = {
    "std dim out of range": lambda lib: lib.std(lib.ones(2, 3), 2),
    "amax dim out of range": lambda lib: lib.amax(lib.ones(2, 3), -3),
    "amax repeated dim": lambda lib: lib.amax(lib.ones(2, 3), (0, 0)),
    "cumprod dim out of range": lambda lib: lib.cumprod(lib.ones(3), 1),
    "logcumsumexp dim out of range": lambda lib: lib.logcumsumexp(lib.ones(3), -2),
    "norm dim out of range": lambda lib: lib.norm(lib.ones(3), dim=1),
}


@pytest.mark.parametrize("case", STATISTICS_ERRORS)
def test_statistics_errors_are_pytorchs(case):
    fails_as_pytorch(STATISTICS_ERRORS[case])


# -- unbind, split, chunk: every piece, its node, and its gradient --------------------------------


def _every_piece(lib, make, shape):
    """Each piece's value and grad_fn, and the input's first and second gradient through all of them
    (each piece weighted differently, so that a piece sent back to the wrong place shows)."""
    x = lib.arange(float(np_prod(shape)), dtype=lib.float64).reshape(shape).requires_grad_(True)
    pieces = make(lib, x)
    total = sum(((p * (i + 1)) ** 2).sum() for i, p in enumerate(pieces))
    (g,) = lib.autograd.grad(total, [x], create_graph=True)
    (second,) = lib.autograd.grad((g * g).sum(), [x])
    return [[p.detach() for p in pieces], [p.grad_fn.name() for p in pieces], g.detach(), second]


def np_prod(shape):
    out = 1
    for s in shape:
        out *= s
    return out


PIECES = {
    "unbind": (lambda lib, x: lib.unbind(x), (3, 2)),
    "unbind dim -1": (lambda lib, x: x.unbind(-1), (2, 3, 2)),
    "split by size": (lambda lib, x: lib.split(x, 2), (5, 2)),
    "split by sizes": (lambda lib, x: x.split([1, 0, 3], 1), (2, 4)),
    "split size past the end": (lambda lib, x: x.split(7), (5,)),
    "chunk": (lambda lib, x: lib.chunk(x, 2), (5, 2)),
    "chunk, fewer pieces": (lambda lib, x: x.chunk(4, dim=0), (5, 3)),
    "chunk dim 1": (lambda lib, x: x.chunk(3, 1), (2, 6)),
}


@pytest.mark.parametrize("case", PIECES)
def test_every_piece_is_pytorchs(case):
    make, shape = PIECES[case]
    same_as_pytorch(lambda lib: _every_piece(lib, make, shape))


PIECES_ERRORS = {
    "unbind of a number": lambda lib: lib.tensor(1.0).unbind(0),
    "unbind dim out of range": lambda lib: lib.ones(2, 3).unbind(2),
    "split size 0": lambda lib: lib.ones(5, 3).split(0),
    "split size negative": lambda lib: lib.ones(5, 3).split(-1),
    "split sizes not summing": lambda lib: lib.ones(5, 3).split([2, 2]),
    "split sizes negative": lambda lib: lib.ones(5, 3).split([6, -1]),
    "split of a number": lambda lib: lib.tensor(1.0).split(1),
    "split dim out of range": lambda lib: lib.ones(5, 3).split([2, 3], 2),
    "chunk 0": lambda lib: lib.ones(5, 3).chunk(0),
    "chunk of a number": lambda lib: lib.tensor(1.0).chunk(1),
}


@pytest.mark.parametrize("case", PIECES_ERRORS)
def test_pieces_errors_are_pytorchs(case):
    fails_as_pytorch(PIECES_ERRORS[case])


# -- gather, scatter, scatter_add, index_select: values, nodes, first and second gradients ---------


def _placing(lib, make):
    x = lib.arange(6.0, dtype=lib.float64).reshape(2, 3).requires_grad_(True)
    s = (lib.arange(6.0, dtype=lib.float64).reshape(2, 3) * 0.5 - 1).requires_grad_(True)
    out = make(lib, x, s)
    total = ((out * lib.arange(1.0, out.numel() + 1, dtype=lib.float64).reshape(out.shape)) ** 2).sum()
    g = lib.autograd.grad(total, [x, s], create_graph=True, allow_unused=True)
    used = [t for t in g if t is not None]
    second = lib.autograd.grad(sum((t * t).sum() for t in used), [x, s], allow_unused=True)
    return [out.detach(), out.grad_fn.name(), [t.detach() if t is not None else None for t in g], list(second)]


PLACING = {
    "gather dim 1": lambda lib, x, s: x.gather(1, lib.tensor([[2, 0, 2], [1, 1, 0]])),
    "gather dim 0, smaller": lambda lib, x, s: lib.gather(x, 0, lib.tensor([[1, 0]])),
    "gather int32 index": lambda lib, x, s: x.gather(-1, lib.tensor([[0], [2]], dtype=lib.int32)),
    "index_select repeats": lambda lib, x, s: x.index_select(1, lib.tensor([2, 2, 0, 1])),
    "index_select 0-d index": lambda lib, x, s: lib.index_select(x, 0, lib.tensor(1)),
    "scatter": lambda lib, x, s: x.scatter(1, lib.tensor([[2, 0], [1, 2]]), s[:, :2]),
    "scatter a number": lambda lib, x, s: x.scatter(0, lib.tensor([[1, 0, 1]]), 7.5),
    "scatter_add repeats": lambda lib, x, s: lib.scatter_add(x, 1, lib.tensor([[2, 2, 2], [0, 1, 0]]), s * 1),
}


@pytest.mark.parametrize("case", PLACING)
def test_placing_is_pytorchs(case):
    same_as_pytorch(lambda lib: _placing(lib, PLACING[case]))


def _ones23(lib):
    return lib.ones(2, 3)


PLACING_ERRORS = {
    "gather index out of range": lambda lib: _ones23(lib).gather(1, lib.tensor([[0, 5]])),
    "gather negative index": lambda lib: _ones23(lib).gather(1, lib.tensor([[0, -1]])),
    "gather dim out of range": lambda lib: _ones23(lib).gather(2, lib.tensor([[0]])),
    "gather float index": lambda lib: _ones23(lib).gather(1, lib.tensor([[0.0]])),
    "gather index dims": lambda lib: _ones23(lib).gather(1, lib.tensor([0, 1])),
    "gather index too large": lambda lib: _ones23(lib).gather(1, lib.zeros(3, 1, dtype=lib.int64)),
    "gather index a list": lambda lib: lib.gather(_ones23(lib), 1, [[0]]),
    "index_select out of range": lambda lib: _ones23(lib).index_select(1, lib.tensor([0, 3])),
    "index_select not a vector": lambda lib: _ones23(lib).index_select(1, lib.tensor([[0, 1]])),
    "index_select float index": lambda lib: _ones23(lib).index_select(1, lib.tensor([0.0])),
    "index_select of a number": lambda lib: lib.tensor(3.0).index_select(0, lib.tensor([0, 0])),
    "scatter index out of range": lambda lib: _ones23(lib).scatter(1, lib.tensor([[0, 5]]), _ones23(lib)),
    "scatter float index": lambda lib: _ones23(lib).scatter(1, lib.tensor([[0.0]]), _ones23(lib)),
    "scatter index larger than src": lambda lib: _ones23(lib).scatter(1, lib.tensor([[0, 1]]), lib.ones(1, 1)),
    "scatter index dims": lambda lib: _ones23(lib).scatter(1, lib.tensor([0, 1]), _ones23(lib)),
    "scatter dtypes": lambda lib: lib.ones(2, 3, dtype=lib.float32).scatter(1, lib.tensor([[0]]), lib.ones(2, 3, dtype=lib.float64)),
    "scatter_add index out of range": lambda lib: _ones23(lib).scatter_add(0, lib.tensor([[2]]), _ones23(lib)),
}


@pytest.mark.parametrize("case", PLACING_ERRORS)
def test_placing_errors_are_pytorchs(case):
    fails_as_pytorch(PLACING_ERRORS[case])


# -- ordering: values, indices, nodes and gradients at ties and nan, and the errors ----------------


def _ordered(lib, make, values):
    """The result's kind, values, indices and grad_fn, and the input's first and second gradient (each
    value weighted differently, so that a gradient sent to another of equal elements shows)."""
    x = lib.tensor(values, dtype=lib.float64, requires_grad=True)
    out = make(lib, x)
    kind = type(out).__name__
    picked, indices = (out[0], out[1]) if isinstance(out, tuple) else (out, None)
    weights = lib.arange(1.0, picked.numel() + 1, dtype=lib.float64).reshape(picked.shape)
    (g,) = lib.autograd.grad(((picked * weights) ** 2).sum(), [x], create_graph=True)
    (second,) = lib.autograd.grad((g * g).sum(), [x])
    return [kind, picked.detach(), indices, picked.grad_fn.name(), g.detach(), second]


NAN = float("nan")
TIES = [[2.0, 1.0, 2.0, 1.0, 2.0, 3.0, 2.0], [1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0], [0.0, NAN, 2.0, NAN, 1.0, 0.0, 2.0]]
SIXTEEN = [float(v % 3) for v in range(16)]  # PyTorch's unstable sort is stable up to 16 elements
TWENTY = [[float((3 * i) % 4), float(i % 2)] for i in range(20)]

ORDERING = {
    "sort ties and nan": (lambda lib, x: lib.sort(x), TIES),
    "sort descending, ties keep their order": (lambda lib, x: x.sort(1, True), TIES),
    "sort stable dim 0 of 20": (lambda lib, x: lib.sort(x, dim=0, descending=True, stable=True), TWENTY),
    "sort 16 ties": (lambda lib, x: lib.sort(x, descending=True), SIXTEEN),
    "sort a number": (lambda lib, x: lib.sort(x, 0), 2.5),
    "msort": (lambda lib, x: lib.msort(x), TWENTY),
    "topk with nan": (lambda lib, x: lib.topk(x, 2), [1.0, NAN, 3.0, 0.5]),
    "topk smallest": (lambda lib, x: x.topk(3, 0, largest=False), [[4.0, 1.0], [2.0, 5.0], [0.5, 3.0], [6.0, 2.5]]),
    "topk ties": (lambda lib, x: lib.topk(x, 4), TIES),
    "topk ties, unsorted": (lambda lib, x: x.topk(5, largest=False, sorted=False), TIES),
    "topk ties dim 0": (lambda lib, x: lib.topk(x, 6, 0), TWENTY),
    "sort unstable ties of 20": (lambda lib, x: lib.sort(x, 0), TWENTY),
    "cummax ties and nan": (lambda lib, x: lib.cummax(x, 1), TIES),
    "cummin ties and nan": (lambda lib, x: x.cummin(-1), TIES),
    "cummax dim 0": (lambda lib, x: lib.cummax(x, 0), TWENTY),
    "median ties along a dim": (lambda lib, x: lib.median(x, 1), TIES),
    "median ties dim 0 keepdim": (lambda lib, x: x.median(0, keepdim=True), TWENTY),
    "median even count": (lambda lib, x: lib.median(x, -1), [[4.0, 1.0, 3.0, 2.0], [1.0, 1.0, 2.0, 2.0]]),
    "median ties share": (lambda lib, x: lib.median(x), [[2.0, 1.0], [2.0, 3.0]]),
    "median of nan": (lambda lib, x: x.median(), [2.0, NAN, 2.0, NAN]),
    "median of a number": (lambda lib, x: lib.median(x, 0), 2.5),
    "kthvalue ties": (lambda lib, x: lib.kthvalue(x, 3, 1), TIES),
    "kthvalue ties dim 0 keepdim": (lambda lib, x: x.kthvalue(7, 0, True), TWENTY),
    "kthvalue the largest": (lambda lib, x: lib.kthvalue(x, 7), TIES),
}


@pytest.mark.parametrize("case", ORDERING)
def test_ordering_is_pytorchs(case):
    make, values = ORDERING[case]
    same_as_pytorch(lambda lib: _ordered(lib, make, values))


def test_argsort_and_an_empty_median_are_pytorchs():
    same_as_pytorch(lambda lib: [lib.argsort(lib.tensor(TIES), 1, True), lib.tensor(TIES).argsort(stable=True),
                                 lib.median(lib.ones(0)), lib.topk(lib.ones(2, 3), 0).values])


def _ones(lib, *shape):
    return lib.ones(*shape, dtype=lib.float64)


ORDERING_ERRORS = {
    "sort dim out of range": lambda lib: lib.sort(_ones(lib, 2, 3), 2),
    "topk k too large": lambda lib: lib.topk(_ones(lib, 3), 4),
    "topk k negative": lambda lib: lib.topk(_ones(lib, 3), -1),
    "topk k a float": lambda lib: lib.topk(_ones(lib, 3), 2.0),
    "topk of a number": lambda lib: lib.topk(lib.tensor(2.0), 2),
    "topk dim out of range": lambda lib: _ones(lib, 2, 3).topk(1, 2),
    "cummax dim out of range": lambda lib: lib.cummax(_ones(lib, 2, 3), 2),
    "median of an empty dim": lambda lib: lib.median(_ones(lib, 2, 0), 1),
    "median keepdim without dim": lambda lib: lib.median(_ones(lib, 3), keepdim=True),
    "kthvalue k 0": lambda lib: lib.kthvalue(_ones(lib, 3), 0),
    "kthvalue k too large": lambda lib: _ones(lib, 2, 3).kthvalue(4),
    "kthvalue of an empty dim": lambda lib: lib.kthvalue(_ones(lib, 2, 0), 1, 1),
    "kthvalue of a number": lambda lib: lib.kthvalue(lib.tensor(2.0), 2),
    "diag of 3 dims": lambda lib: lib.diag(_ones(lib, 2, 3, 4)),
    "diag of a number": lambda lib: lib.diag(lib.tensor(2.0)),
    "diag_embed identical dims": lambda lib: lib.diag_embed(_ones(lib, 2, 3), 1, 0, 0),
    "diag_embed of a number": lambda lib: lib.diag_embed(lib.tensor(2.0)),
    "cross without a dim of size 3": lambda lib: lib.cross(_ones(lib, 4, 2), _ones(lib, 4, 2)),
    "cross dim of size 4": lambda lib: lib.cross(_ones(lib, 3, 4), _ones(lib, 3, 4), dim=1),
    "cross dim -1 of size 4": lambda lib: lib.cross(_ones(lib, 3, 4), _ones(lib, 3, 4), -1),
    "cross of different dims": lambda lib: lib.cross(_ones(lib, 4, 3), _ones(lib, 3), dim=-1),
    "cross shapes that do not broadcast": lambda lib: lib.cross(_ones(lib, 4, 3), _ones(lib, 5, 3), dim=1),
    "cross dim out of range": lambda lib: lib.cross(_ones(lib, 4, 3), _ones(lib, 4, 3), dim=2),
    "cross of numbers": lambda lib: lib.cross(lib.tensor(1.0), lib.tensor(1.0)),
}


@pytest.mark.parametrize("case", ORDERING_ERRORS)
def test_ordering_errors_are_pytorchs(case):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # cross's warning without a dim
        fails_as_pytorch(ORDERING_ERRORS[case])


def test_cross_without_dim_warns_that_the_default_will_change():
    x = autodiff.tensor([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]])
    with pytest.warns(UserWarning, match="Using autodiff.cross without specifying the dim arg is deprecated"):
        assert autodiff.cross(x, x.flip(0)).tolist() == [[0.0, 0.0, 1.0], [0.0, 0.0, -1.0]]


def _tie_cases():
    """Random rows of few distinct values (and some nan), short and long, for every function that
    chooses among equal values: each must choose as PyTorch's CPU kernels do."""
    import numpy as np

    rng = np.random.default_rng(24)
    for n in (3, 7, 16, 17, 40, 130):
        for distinct in (2, 5):
            values = rng.integers(0, distinct, size=(3, n)).astype(float)
            values[0, rng.integers(0, n, size=2)] = NAN
            k = int(rng.integers(1, n + 1))
            yield n, values.tolist(), k, min(k, max(n // 64, 1))


TIE_CASES = list(_tie_cases())


@pytest.mark.parametrize("n, values, k, small_k", TIE_CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(TIE_CASES)])
def test_equal_values_are_chosen_as_pytorchs_kernels_choose(n, values, k, small_k):
    def chosen(lib):
        x = lib.tensor(values, dtype=lib.float64)
        return [lib.sort(x).indices, x.sort(1, True).indices, lib.argsort(x.t(), 0), lib.msort(x.t()),
                lib.topk(x, k).indices, lib.topk(x, k, largest=False, sorted=False).indices,
                lib.topk(x, small_k).indices, x.topk(small_k, sorted=False).indices,
                lib.kthvalue(x, k).indices, lib.median(x, 1).indices, lib.cummax(x, 1).indices,
                lib.cummin(x, 1).indices,
                lib.sort(x[1], descending=True).indices, x[0].topk(k, sorted=False).indices,  # one row
                lib.kthvalue(x[0], k).indices]

    same_as_pytorch(chosen)


def test_k_is_read_as_pytorch_reads_an_int():
    same_as_pytorch(lambda lib: [lib.topk(lib.tensor([3.0, 1.0, 2.0]), lib.tensor(2)).values,
                                 lib.kthvalue(lib.tensor([3.0, 1.0, 2.0]), lib.tensor(1)).values])
    fails_as_pytorch(lambda lib: lib.topk(lib.tensor([3.0, 1.0, 2.0]), True))
    fails_as_pytorch(lambda lib: lib.kthvalue(lib.tensor([3.0, 1.0, 2.0]), lib.tensor(1.0)))


# -- the graph API: mark_non_differentiable, detach_, long/int/bool ----------------------------------


def test_mark_non_differentiable_outputs_do_not_require_grad_and_get_zero_gradients():
    def snippet(lib):
        class ValuesAndMask(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                mask = (x > 0).double()
                ctx.mark_non_differentiable(mask)
                ctx.save_for_backward(mask)
                return x * mask, mask

            @staticmethod
            def backward(ctx, grad_values, grad_mask):
                (mask,) = ctx.saved_tensors
                return grad_values * mask + grad_mask  # grad_mask arrives as zeros, materialized

        x = lib.tensor([1.5, -2.0, 3.0], requires_grad=True)
        values, mask = ValuesAndMask.apply(x)
        (values * 2 + mask).sum().backward()
        return [values.requires_grad, mask.requires_grad, mask.grad_fn is None, x.grad]

    same_as_pytorch(snippet)


@pytest.mark.parametrize("case", ["result", "leaf", "view"])
def test_detach_in_place(case):
    def snippet(lib):
        x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        y = x * 2 if case != "view" else (x * 2)[1:]
        if case == "leaf":
            y = x
        same = y.detach_() is y
        return [same, y.requires_grad, y.grad_fn is None, y.is_leaf, y]

    if case != "view":
        return same_as_pytorch(snippet)
    # PyTorch refuses a view ("Can't detach views in-place"); autodiff's views are copies (the guide's
    # "Where autodiff differs"), so the slice is detached as any tensor is
    assert outcome(snippet, torch)[0] == "error"
    assert outcome(snippet, autodiff)[:4] == [True, False, True, True]


def test_long_int_and_bool_copies_truncate_as_pytorch():
    def snippet(lib):
        x = lib.tensor([1.5, -2.7, 0.0, 3.0], requires_grad=True)
        copies = [x.long(), x.int(), x.bool()]
        return [str(c.dtype).split(".")[-1] for c in copies] + [c.requires_grad for c in copies] + copies

    same_as_pytorch(snippet)


def test_fill_in_place_records_its_node():
    def snippet(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = x * 3
        y.fill_(2.0)
        (y * x).sum().backward()
        return [type(y.grad_fn).__name__, x.grad]

    same_as_pytorch(snippet)


# -- autograd.functional: a v of the wrong length or size, strict mode, what hessian, vhp and hvp take ------


def _point(lib):
    return lib.tensor([1.0, 2.0], requires_grad=True)


def _cube(lib):
    return lambda a: (a ** 3).sum()


FUNCTIONAL_EXACT = {  # each a call that PyTorch answers with a value or an error; ours must be the same
    "vjp_v_of_two_for_one_output": lambda F, lib: F.vjp(lambda a: a * 2, _point(lib), (lib.ones(2), lib.ones(2))),
    "vjp_v_of_one_for_two_outputs": lambda F, lib: F.vjp(lambda a: (a * 2, a * 3), _point(lib), (lib.ones(2),)),
    "vjp_v_of_another_size": lambda F, lib: F.vjp(lambda a: a * 2, _point(lib), lib.ones(3)),
    "vjp_v_entry_of_another_size": lambda F, lib: F.vjp(lambda a: (a * 2, a), _point(lib), (lib.ones(2), lib.ones(3))),
    "jvp_v_of_two_for_one_input": lambda F, lib: F.jvp(lambda a: a * 2, _point(lib), (lib.ones(2), lib.ones(2))),
    "jvp_v_of_one_for_two_inputs": lambda F, lib: F.jvp(lambda a, b: a * b, (_point(lib), _point(lib)),
                                                        (lib.ones(2),)),
    "jvp_v_of_another_size": lambda F, lib: F.jvp(lambda a: a * 2, _point(lib), lib.ones(3)),
    "jvp_no_v_for_two_elements": lambda F, lib: F.jvp(lambda a: a * 2, _point(lib)),
    "vhp_v_of_two_for_one_input": lambda F, lib: F.vhp(_cube(lib), _point(lib), (lib.ones(2), lib.ones(2))),
    "vhp_v_of_one_for_two_inputs": lambda F, lib: F.vhp(lambda a, b: (a ** 2 * b).sum(), (_point(lib), _point(lib)),
                                                        lib.ones(2)),
    "hvp_v_of_two_for_one_input": lambda F, lib: F.hvp(_cube(lib), _point(lib), (lib.ones(2), lib.ones(2))),
    "hvp_v_of_another_size": lambda F, lib: F.hvp(_cube(lib), _point(lib), lib.ones(3)),
    "vhp_no_v_for_two_elements": lambda F, lib: F.vhp(_cube(lib), _point(lib)),
    # strict mode: outputs that do not require grad, inputs they do not depend on, linear functions
    "vjp_strict_constant": lambda F, lib: F.vjp(lambda a: lib.ones(2), _point(lib), lib.ones(2), strict=True),
    "vjp_strict_detached": lambda F, lib: F.vjp(lambda a: a.detach(), _point(lib), lib.ones(2), strict=True),
    "vjp_strict_create_graph_linear": lambda F, lib: F.vjp(lambda a: a * 2, _point(lib), lib.ones(2), strict=True,
                                                           create_graph=True),
    "vjp_strict_unused_input": lambda F, lib: F.vjp(lambda a, b: a * 2, (_point(lib), _point(lib)), lib.ones(2),
                                                    strict=True),
    "jvp_strict_constant": lambda F, lib: F.jvp(lambda a: lib.ones(2), _point(lib), lib.ones(2), strict=True),
    "jvp_strict_linear": lambda F, lib: F.jvp(lambda a: a * 2, _point(lib), lib.ones(2), strict=True),
    "jvp_strict_unused_input": lambda F, lib: F.jvp(lambda a, b: a * 2, (_point(lib), _point(lib)),
                                                    (lib.ones(2), lib.ones(2)), strict=True),
    "jacobian_strict_constant": lambda F, lib: F.jacobian(lambda a: lib.ones(2), _point(lib), strict=True),
    "jacobian_strict_unused_input": lambda F, lib: F.jacobian(lambda a, b: a * 2, (_point(lib), _point(lib)),
                                                              strict=True),
    "jacobian_strict_create_graph_linear": lambda F, lib: F.jacobian(lambda a: a * 2, _point(lib), strict=True,
                                                                     create_graph=True),
    "jacobian_strict_and_vectorize": lambda F, lib: F.jacobian(lambda a: a * 2, _point(lib), strict=True,
                                                               vectorize=True),
    "hessian_strict_linear": lambda F, lib: F.hessian(lambda a: (a * 2).sum(), _point(lib), strict=True),
    "hessian_strict_quadratic_create_graph": lambda F, lib: F.hessian(lambda a: (a ** 2).sum(), _point(lib),
                                                                      strict=True, create_graph=True),
    "hessian_strict_cubic": lambda F, lib: F.hessian(_cube(lib), _point(lib), strict=True),
    "vhp_strict_linear": lambda F, lib: F.vhp(lambda a: (a * 2).sum(), _point(lib), lib.ones(2), strict=True),
    "vhp_strict_quadratic": lambda F, lib: F.vhp(lambda a: (a ** 2).sum(), _point(lib), lib.ones(2), strict=True),
    "hvp_strict_linear": lambda F, lib: F.hvp(lambda a: (a * 2).sum(), _point(lib), lib.ones(2), strict=True),
    "hvp_strict_quadratic": lambda F, lib: F.hvp(lambda a: (a ** 2).sum(), _point(lib), lib.ones(2), strict=True),
    "hvp_strict_cubic": lambda F, lib: F.hvp(_cube(lib), _point(lib), lib.ones(2), strict=True),
    # what hessian, vhp and hvp take from the function: one Tensor of one element, of any shape
    "hessian_of_a_one_element_vector": lambda F, lib: F.hessian(lambda a: (a ** 3).sum().reshape(1), _point(lib)),
    "hessian_of_a_1x1_matrix": lambda F, lib: F.hessian(lambda a: (a ** 3).sum().reshape(1, 1), _point(lib)),
    "vhp_of_a_one_element_vector": lambda F, lib: F.vhp(lambda a: (a ** 3).sum().reshape(1), _point(lib),
                                                        lib.ones(2)),
    "hvp_of_a_1x1_matrix": lambda F, lib: F.hvp(lambda a: (a ** 3).sum().reshape(1, 1), _point(lib), lib.ones(2)),
    "hessian_of_a_tuple": lambda F, lib: F.hessian(lambda a: ((a ** 3).sum(),), _point(lib)),
    "vhp_of_a_tuple": lambda F, lib: F.vhp(lambda a: ((a ** 3).sum(),), _point(lib), lib.ones(2)),
    "hvp_of_a_tuple_of_two": lambda F, lib: F.hvp(lambda a: ((a ** 3).sum(), a.sum()), _point(lib), lib.ones(2)),
    "hessian_of_a_list": lambda F, lib: F.hessian(lambda a: [(a ** 3).sum()], _point(lib)),
    "vhp_of_a_float": lambda F, lib: F.vhp(lambda a: 3.0, _point(lib), lib.ones(2)),
    "hvp_of_a_list": lambda F, lib: F.hvp(lambda a: [(a ** 3).sum()], _point(lib), lib.ones(2)),
    "hessian_of_a_vector": lambda F, lib: F.hessian(lambda a: a ** 3, _point(lib)),
    "hessian_of_two_inputs": lambda F, lib: F.hessian(lambda a, b: (a ** 2 * b).sum(), (_point(lib), _point(lib))),
    "vhp_of_two_inputs": lambda F, lib: F.vhp(lambda a, b: (a ** 2 * b).sum(), (_point(lib), _point(lib)),
                                              (lib.ones(2), lib.ones(2))),
    # strategies
    "jacobian_unknown_strategy": lambda F, lib: F.jacobian(lambda a: a * 2, _point(lib), strategy="sideways"),
    "jacobian_forward_mode_needs_vectorize": lambda F, lib: F.jacobian(lambda a: a ** 3, _point(lib),
                                                                       strategy="forward-mode"),
    "jacobian_forward_mode_and_create_graph": lambda F, lib: F.jacobian(lambda a: a ** 3, _point(lib),
                                                                        strategy="forward-mode", create_graph=True),
    "jacobian_forward_mode_and_strict": lambda F, lib: F.jacobian(lambda a: a ** 3, _point(lib),
                                                                  strategy="forward-mode", strict=True, vectorize=True),
    "hessian_unknown_strategy": lambda F, lib: F.hessian(_cube(lib), _point(lib), outer_jacobian_strategy="x"),
}


def _functional_outcome(result) -> list:
    """What a call gave, tensors with their node's name (PyTorch keeps a history in some results)."""
    if isinstance(result, (list, tuple)):
        return [type(result).__name__] + [_functional_outcome(r) for r in result]
    return [result, type(result.grad_fn).__name__ if result.grad_fn is not None else None]


@pytest.mark.parametrize("key", sorted(FUNCTIONAL_EXACT))
def test_functional_is_pytorchs_value_or_error(key):
    same_as_pytorch(lambda lib: _functional_outcome(FUNCTIONAL_EXACT[key](lib.autograd.functional, lib)))


def test_forward_mode_jacobians_keep_pytorchs_history_and_lists():
    """strategy="forward-mode" returns tensors in the input's graph (ReshapeAliasBackward0 after
    PyTorch's permute of the split tangents), and lists for tuples."""
    def snippet(lib):
        x = _point(lib)
        F = lib.autograd.functional
        jac = F.jacobian(lambda a: a ** 3, x, strategy="forward-mode", vectorize=True)
        hess = F.hessian(_cube(lib), x, outer_jacobian_strategy="forward-mode", vectorize=True)
        both = F.jacobian(lambda a, b: (a ** 3 * b, a.sum()), (x, x * 2), strategy="forward-mode", vectorize=True)
        (jac.sum() + hess.sum()).backward()
        return [_functional_outcome(jac), _functional_outcome(hess), _functional_outcome(both), x.grad,
                type(jac.grad_fn.next_functions[0][0].next_functions[0][0]).__name__]

    same_as_pytorch(snippet)


# -- custom Functions: materialized gradients, dirty and non-differentiable outputs, forward mode, vmap ------


def _grad_fn_name(t):
    return type(t.grad_fn).__name__ if t is not None and t.grad_fn is not None else None


def _two_outputs(lib, materialize: bool, non_differentiable: bool, seen: list):
    class Pair(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.set_materialize_grads(materialize)
            a, b = x * 2, x * 3
            if non_differentiable:
                ctx.mark_non_differentiable(b)
            return a, b

        @staticmethod
        def backward(ctx, ga, gb):
            seen.append([ga is None, gb is None, None if gb is None else gb.tolist()])
            return None if ga is None else ga * 2

    return Pair


@pytest.mark.parametrize("materialize", [True, False])
@pytest.mark.parametrize("non_differentiable", [True, False])
@pytest.mark.parametrize("used", ["first", "second"])
def test_materialized_gradients_of_custom_functions_are_pytorchs(materialize, non_differentiable, used):
    def snippet(lib):
        seen = []
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        a, b = _two_outputs(lib, materialize, non_differentiable, seen).apply(x)
        (a if used == "first" or non_differentiable else b).sum().backward()
        return [seen, x.grad, b.requires_grad]

    same_as_pytorch(snippet)


def _dirty(lib, non_differentiable: bool):
    class Double(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            x.mul_(2)
            ctx.mark_dirty(x)
            if non_differentiable:
                ctx.mark_non_differentiable(x)
            return x

        @staticmethod
        def backward(ctx, g):
            return g * 2

    return Double


@pytest.mark.parametrize("non_differentiable", [True, False])
@pytest.mark.parametrize("given", ["leaf", "intermediate", "constant"])
def test_mark_dirty_is_pytorchs_on_differentiable_and_non_differentiable_outputs(non_differentiable, given):
    def snippet(lib):
        leaf = lib.tensor([1.0, 2.0], requires_grad=given != "constant")
        x = leaf * 1 if given == "intermediate" else leaf
        y = _dirty(lib, non_differentiable).apply(x)
        return [y, y.requires_grad, _grad_fn_name(y), y is x, x._version, y._version, x.requires_grad]

    same_as_pytorch(snippet)


def _scaled(lib, tangent_for_the_mask: bool, constant_first: bool):
    class Scale(lib.autograd.Function):
        @staticmethod
        def forward(ctx, *args):
            k, x = args if constant_first else args[::-1]
            ctx.k = k
            mask = (x > 1).to(x.dtype)
            ctx.mark_non_differentiable(mask)
            return x * k, mask

        @staticmethod
        def backward(ctx, g, gm):
            return (None, g * ctx.k) if constant_first else (g * ctx.k, None)

        @staticmethod
        def jvp(ctx, *tangents):
            t = tangents[1] if constant_first else tangents[0]
            return t * ctx.k, (t * 0 if tangent_for_the_mask else None)

    return Scale


@pytest.mark.parametrize("tangent_for_the_mask", [False, True])
@pytest.mark.parametrize("constant_first", [True, False])
def test_custom_function_forward_mode_with_a_number_and_non_differentiable_outputs(tangent_for_the_mask,
                                                                                   constant_first):
    def snippet(lib):
        fw = lib.autograd.forward_ad
        with fw.dual_level():
            d = fw.make_dual(lib.tensor([1.0, 2.0]), lib.tensor([1.0, 1.0]))
            args = (3.0, d) if constant_first else (d, 3.0)
            y, mask = _scaled(lib, tangent_for_the_mask, constant_first).apply(*args)
            return [fw.unpack_dual(y).tangent, fw.unpack_dual(mask).tangent, mask]

    same_as_pytorch(snippet)


def test_setup_context_with_forwards_default_arguments():
    def snippet(lib):
        class Affine(lib.autograd.Function):
            @staticmethod
            def forward(x, scale=2.0, shift=1.0):
                return x * scale + shift

            @staticmethod
            def setup_context(ctx, inputs, output):
                ctx.given = len(inputs)
                ctx.scale = inputs[1] if len(inputs) > 1 else 2.0

            @staticmethod
            def backward(ctx, g):
                return (g * ctx.scale,) + (None,) * (ctx.given - 1)

        x, x2 = lib.tensor([1.0, 2.0], requires_grad=True), lib.tensor([1.0, 2.0], requires_grad=True)
        y, z = Affine.apply(x), Affine.apply(x2, 3.0)
        (y.sum() + z.sum()).backward()
        return [y, z, x.grad, x2.grad]

    same_as_pytorch(snippet)


def _vmappable(lib, style: str):
    if style == "old":
        class Twice(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2

            @staticmethod
            def backward(ctx, g):
                return g * 2
        return Twice

    class Square(lib.autograd.Function):
        generate_vmap_rule = style in ("generated", "both")

        @staticmethod
        def forward(x):
            return x ** 2

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.save_for_backward(inputs[0])

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * 2 * x

        if style in ("own", "both"):
            @staticmethod
            def vmap(info, in_dims, x):
                return x.movedim(in_dims[0], 1) ** 2 + info.batch_size, 1

    return Square


@pytest.mark.parametrize("style", ["old", "none", "generated", "own", "both"])
def test_custom_function_under_vmap_is_pytorchs_value_or_error(style):
    def snippet(lib):
        x = lib.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
        fn = _vmappable(lib, style)
        mapped = lib.func.vmap(fn.apply)(x)
        gradients = lib.func.vmap(lib.func.grad(lambda row: fn.apply(row).sum()))(x) if style == "generated" else None
        return [mapped, gradients]

    same_as_pytorch(snippet)


@pytest.mark.parametrize("value", ["setitem_whole", "setitem_ellipsis", "setitem_part", "copy_", "fill_number"])
def test_a_tensor_copied_into_place_records_pytorchs_node(value):
    def snippet(lib):
        x = lib.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
        w = lib.zeros(2, 2) if value != "fill_number" else x * 1
        if value == "setitem_whole":
            w[:] = x * 2
        elif value == "setitem_ellipsis":
            w[...] = x * 2
        elif value == "setitem_part":
            w[:1] = x[:1] * 2
        elif value == "copy_":
            w.copy_(x * 2)
        else:
            w[:] = 5.0
        w.sum().backward()
        return [w, x.grad, _grad_fn_name(w), [type(n).__name__ for n, _ in w.grad_fn.next_functions]]

    same_as_pytorch(snippet)


def test_a_value_of_another_shape_set_into_place_is_pytorchs_error():
    def snippet(lib):
        w = lib.zeros(2, 2)
        w[0] = lib.ones(2, 2)
    fails_as_pytorch(snippet)


# -- hooks: on a non-leaf, after accumulation ---------------------------------------------------------------


def test_a_non_leaf_hook_returning_none_leaves_the_gradient():
    def snippet(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = x * 2
        y.retain_grad()
        seen = []
        y.register_hook(lambda g: seen.append(g.tolist()))
        y.register_hook(lambda g: None)
        (y * 3).sum().backward()
        return [seen, y.grad, x.grad]

    same_as_pytorch(snippet)


@pytest.mark.parametrize("returned", ["tensor", "number"])
def test_a_post_accumulate_grad_hook_returning_something_is_pytorchs_error(returned):
    def snippet(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        x.register_post_accumulate_grad_hook(lambda t: t.grad * 2 if returned == "tensor" else 5)
        (x * 3).sum().backward()

    fails_as_pytorch(snippet)


def test_post_accumulate_grad_hooks_run_between_the_nodes_pre_and_post_hooks():
    def snippet(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        order = []
        x.register_hook(lambda g: order.append(["tensor", g.tolist()]))
        x.register_post_accumulate_grad_hook(lambda t: order.append(["accumulated", t.grad.tolist()]))
        x.register_hook(lambda g: order.append(["tensor, doubling", g.tolist()]) or g * 2)
        node = (x * 1).grad_fn.next_functions[0][0]
        node.register_prehook(lambda grads: order.append(["node pre", [g.tolist() for g in grads]]))
        node.register_hook(lambda grad_inputs, grad_outputs: order.append(["node post", [g.tolist() for g in grad_outputs]]))
        (x * 3).sum().backward()
        (x * 3).sum().backward()
        return [order, x.grad]

    same_as_pytorch(snippet)


# -- errors PyTorch raises: views changed in place, a saved tensor detached in place, gradcheck -----------

VIEWS_IN_PLACE = {
    "view_of_a_leaf": lambda lib, x: x[:2].mul_(2),
    "view_of_a_view_of_a_leaf": lambda lib, x: x.view(3, 1)[1:].t().add_(1),
    "view_of_a_leaf_through_setitem": lambda lib, x: x.unsqueeze(0).__setitem__(0, 1.0),
    "split_piece": lambda lib, x: (x * 1).split(2)[1].mul_(2),
    "split_with_sizes_piece": lambda lib, x: (x * 1).split([1, 2])[1].mul_(2),
    "chunk_piece": lambda lib, x: (x * 1).chunk(3)[2].add_(1),
    "unbind_piece": lambda lib, x: (x * 1).unbind()[0].zero_(),
    "view_of_an_intermediate": lambda lib, x: (x * 1)[:2].mul_(2),  # allowed: CopySlices in PyTorch
}


@pytest.mark.parametrize("key", sorted(VIEWS_IN_PLACE))
def test_changing_a_view_in_place_is_pytorchs_error_or_value(key):
    def snippet(lib):
        x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        result = VIEWS_IN_PLACE[key](lib, x)
        return [result, x] if result is not None else [x]

    same_as_pytorch(snippet)


@pytest.mark.parametrize("changed", [False, True])
def test_a_saved_tensor_detached_in_place_is_pytorchs_error(changed):
    def snippet(lib):
        x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        y = x * 1
        z = y ** 2  # saves y
        y.detach_()
        if changed:
            y.zero_()
        z.sum().backward()

    fails_as_pytorch(snippet)


def test_a_saved_output_detached_in_place_is_no_error_as_in_pytorch():
    def snippet(lib):
        x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        y = x * 1
        z = y.exp()  # saves its output, not y
        y.detach_()
        y.mul_(2)
        z.sum().backward()
        return [x.grad, y]

    same_as_pytorch(snippet)


GRADCHECK_SHAPES = {
    "element_by_element": lambda lib, x: lib.autograd.gradcheck(lambda t: t[t > 1.9999999] * 2, (x,)),
    "without_raising": lambda lib, x: lib.autograd.gradcheck(lambda t: t[t > 1.9999999] * 2, (x,),
                                                             raise_exception=False),
    "fast_mode": lambda lib, x: lib.autograd.gradcheck(lambda t: t[t > 1.9999999] * 2, (x,), fast_mode=True),
    "away_from_the_edge": lambda lib, x: lib.autograd.gradcheck(lambda t: t[t > 1.5] * 2, (x,)),
}


@pytest.mark.parametrize("key", sorted(GRADCHECK_SHAPES))
def test_gradcheck_of_an_output_whose_shape_depends_on_the_values(key):
    same_as_pytorch(lambda lib: GRADCHECK_SHAPES[key](lib, lib.tensor([1.0, 2.0, 3.0], requires_grad=True)))


def _doubling(lib, materialize: bool, handles_none: bool):
    class Double(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.set_materialize_grads(materialize)
            return x * 2, x * 3

        @staticmethod
        def backward(ctx, g, h):
            if handles_none:
                g = lib.zeros(2) if g is None else g
                h = lib.zeros(2) if h is None else h
            return g * 2 + h * 3

    return Double


@pytest.mark.parametrize("materialize", [True, False])
@pytest.mark.parametrize("handles_none", [True, False])
@pytest.mark.parametrize("raise_exception", [True, False])
def test_gradcheck_with_an_undefined_gradient(materialize, handles_none, raise_exception):
    def snippet(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        return lib.autograd.gradcheck(_doubling(lib, materialize, handles_none).apply, (x,),
                                      raise_exception=raise_exception, check_undefined_grad=True)

    same_as_pytorch(snippet)


def test_a_view_made_while_nothing_was_recorded_may_change_on_purpose():
    """Memory is never shared here (docs/guide.md, "Where autodiff differs"): a tensor made under
    no_grad is no view of its base, so changing it in place changes it alone, which PyTorch
    forbids ("A view was created in no_grad mode...")."""
    x = autodiff.tensor([1.0, 2.0, 3.0], requires_grad=True)
    with autodiff.no_grad():
        v = x[:2]
    v.mul_(2)
    assert v.tolist() == [2.0, 4.0] and x.tolist() == [1.0, 2.0, 3.0] and v.grad_fn is None
    theirs = outcome(lambda lib: _changed_under_no_grad(lib), torch)
    assert theirs[:2] == ("error", "RuntimeError") and "created in no_grad mode" in theirs[2]


def _changed_under_no_grad(lib):
    x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
    with lib.no_grad():
        v = x[:2]
    v.mul_(2)


# -- the graph a second derivative records: sum over a dim, squeeze, expand, broadcasting -----------------

def _chain(t) -> list:
    """The node names from a tensor's grad_fn down its first inputs."""
    names, node = [], t.grad_fn
    while node is not None and len(names) < 10:
        names.append(type(node).__name__)
        node = next((n for n, _ in node.next_functions if n is not None), None)
    return names


GRAPHS = {  # (the leaf's shape, what is made of it)
    "unsqueeze_sum_dim": ((2,), lambda x: x.unsqueeze(0).sum(0)),
    "unsqueeze_then_sum_twice": ((2,), lambda x: x.unsqueeze(0).sum(0).sum(0)),
    "expand_sum_dim": ((2,), lambda x: x.expand(3, 2).sum(0)),
    "unsqueeze_expand_sum_dim": ((2,), lambda x: x.unsqueeze(0).expand(3, 2).sum(0)),
    "sum_of_two_dims": ((2, 3, 2), lambda x: x.sum((0, 2))),
    "sum_of_a_dim_kept": ((2, 3), lambda x: x.sum(1, keepdim=True)),
    "squeeze_all": ((1, 2, 1), lambda x: x.squeeze()),
    "squeeze_nothing": ((2,), lambda x: x.squeeze()),
    "squeeze_dim": ((1, 2), lambda x: x.squeeze(0)),
    "squeeze_dims": ((1, 2, 1), lambda x: x.squeeze((0, 2))),
    "broadcast_against_a_matrix": ((2,), lambda x: x * _matrix(x)),
    "broadcast_with_a_column": ((3, 1), lambda x: x * _matrix(x)[:1]),
}


def _matrix(like):
    lib = torch if isinstance(like, torch.Tensor) else autodiff
    return lib.tensor([[1.0, 2.0], [3.0, 4.0]]) if like.ndim == 1 else lib.tensor([[1.0, 2.0]])


@pytest.mark.parametrize("key", sorted(GRAPHS))
def test_second_derivative_graphs_record_pytorchs_nodes(key):
    shape, made = GRAPHS[key]

    def snippet(lib):
        x = lib.arange(1.0, 1.0 + math.prod(shape)).reshape(shape).requires_grad_(True)
        y = made(x)
        (g,) = lib.autograd.grad((y * y).sum(), x, create_graph=True)
        return [y, _grad_fn_name(y), g, _chain(g)]

    same_as_pytorch(snippet)
