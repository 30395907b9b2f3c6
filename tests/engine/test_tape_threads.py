"""Recording and backward in several threads at once: PyTorch's "Multithreaded Autograd" notes.

Each thread records on tapes of its own; a record is numbered in one process-wide order, so a
record that uses another thread's tensor is numbered after it. The tests switch threads every
microsecond (`sys.setswitchinterval`), so that a switch falls between any two bytecodes of the
recording and backward paths, and compare every gradient bit for bit with one thread's.
"""

import threading

import numpy as np
import pytest
from threads import run_threads, switching_every_microsecond

import autodiff as torch
from autodiff.autograd import tape as tapes
from autodiff.autograd.engine import topological
from autodiff.autograd.node import AccumulateGrad

SECOND_BACKWARD = "Trying to backward through the graph a second time"


@pytest.fixture
def fast_switching():
    with switching_every_microsecond():
        yield


class Model:
    """A small model whose graph spans several tapes: a 0-d chain (the inline paths), a matrix
    layer, and an early result used again after more than a tape's window of records."""

    def __init__(self, seed: int) -> None:
        rng = np.random.default_rng(seed)
        self.w = torch.tensor(rng.normal(size=(3, 3)), requires_grad=True)
        self.b = torch.tensor(rng.normal(size=(3,)), requires_grad=True)
        self.s = torch.tensor(float(rng.normal()), requires_grad=True)
        self.inputs = [rng.normal(size=(2, 3)) for _ in range(7)]

    def params(self):
        return self.w, self.b, self.s

    def loss(self, step: int):
        x = torch.tensor(self.inputs[step % len(self.inputs)])
        h = torch.tanh(x @ self.w + self.b)
        early = h.sum()
        y = self.s
        for _ in range(tapes.WINDOW + 4):  # further back than the window: a second tape
            y = torch.tanh(y * self.s + 0.5)
        h = torch.tanh(h @ self.w) * y
        return (h * h).sum() + early * y

    def step(self, step: int, how: str):
        loss = self.loss(step)
        if how == "grad":
            return [g._data.copy() for g in torch.autograd.grad(loss, self.params())]
        for p in self.params():
            p.grad = None
        loss.backward()
        return [p.grad._data.copy() for p in self.params()]


def expected(seed: int, steps: int, how: str):
    model = Model(seed)
    return [model.step(k, how) for k in range(steps)]


def differences(got, want) -> int:
    return sum(any(g.tobytes() != w.tobytes() for g, w in zip(a, b)) for a, b in zip(got, want))


@pytest.mark.parametrize("how", ["backward", "grad"])
def test_two_threads_each_with_its_own_model_match_one_thread_bit_for_bit(fast_switching, how):
    steps, runs = 250, 3
    want = {seed: expected(seed, steps, how) for seed in (1, 2)}
    for _ in range(runs):
        got = {}

        def train(seed):
            model = Model(seed)
            got[seed] = [model.step(k, how) for k in range(steps)]

        run_threads(lambda: train(1), lambda: train(2))
        assert [differences(got[s], want[s]) for s in (1, 2)] == [0, 0]


def numbered_after_inputs(root) -> int:
    """Check that every node of the graph is numbered after each node it leads to (the order
    backward runs in); the number of nodes checked."""
    order = topological([root.grad_fn])
    for node in order:
        for child, _ in node.next_functions:
            if child is not None and child.__class__ is not AccumulateGrad:
                assert child._seq < node._seq, (node, child)
    return len(order)


def test_a_graph_shared_by_two_threads_with_retain_graph_gives_each_the_same_gradients(fast_switching):
    w = torch.tensor(np.linspace(0.1, 0.9, 9).reshape(3, 3), requires_grad=True)
    x = torch.tensor(np.linspace(-1, 1, 6).reshape(2, 3))
    h = x
    for _ in range(tapes.WINDOW + 3):
        h = torch.tanh(h @ w)
    shared = h * w.sum()  # a graph of two tapes, made by this thread

    def heads(k):
        return (shared * (k + 1)).sum() + torch.tanh(shared).sum() * k

    want = [torch.autograd.grad(heads(k), [w], retain_graph=True)[0]._data.copy() for k in range(2)]
    got = {0: [], 1: []}

    def use(k):
        for _ in range(60):
            got[k].append(torch.autograd.grad(heads(k), [w], retain_graph=True)[0]._data.copy())

    run_threads(lambda: use(0), lambda: use(1))
    for k in range(2):
        assert all(g.tobytes() == want[k].tobytes() for g in got[k])
    assert numbered_after_inputs(heads(1)) > 2 * tapes.WINDOW


def test_a_shared_graph_backward_in_two_threads_without_retain_graph_raises_the_second_time_error(fast_switching):
    for _ in range(30):
        w = torch.tensor([0.5, 1.5, 2.5], requires_grad=True)
        shared = torch.tanh(w * w)
        outcomes = {}

        def backward(k):
            try:
                (shared * (k + 2)).sum().backward()
                outcomes[k] = "done"
            except RuntimeError as exc:
                assert SECOND_BACKWARD in str(exc)
                outcomes[k] = "second time"

        run_threads(lambda: backward(0), lambda: backward(1))
        assert sorted(outcomes.values()) == ["done", "second time"]
        k = next(k for k, outcome in outcomes.items() if outcome == "done")
        a = w._data
        assert w.grad._data.tolist() == ((k + 2) * (1 - np.tanh(a * a) ** 2) * (2 * a)).tolist()


def test_a_tensor_of_one_thread_used_by_another_while_the_first_goes_on_appending(fast_switching):
    s = torch.tensor(0.7, requires_grad=True)
    handed = []
    steps = 300

    def first():
        y = s
        for k in range(steps):
            y = torch.tanh(y * s + 0.25)
            if k % 10 == 0:
                handed.append(y)

    def second(out):
        while len(handed) < steps // 10:
            n = len(handed)
            if n:
                mine = torch.tanh(handed[n - 1] * 2.0) + s  # links to the first thread's record
                out.append((mine, n))
        for _ in range(3):  # and some after the first thread is done
            out.append((torch.tanh(handed[-1] * 2.0) + s, len(handed)))

    out = []
    run_threads(first, lambda: second(out))
    assert out
    for mine, n in out[-20:]:
        (got,) = torch.autograd.grad(mine, [s], retain_graph=True)
        # the same graph, made by one thread
        y = s
        for k in range(10 * (n - 1) + 1):
            y = torch.tanh(y * s + 0.25)
        (want,) = torch.autograd.grad(torch.tanh(y * 2.0) + s, [s])
        assert got._data.tobytes() == want._data.tobytes()
        numbered_after_inputs(mine)


@pytest.mark.parametrize("how", ["backward", "hooked"])
def test_one_leaf_from_two_threads_loses_no_contribution(fast_switching, how):
    w = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    x = torch.tensor([0.5, 0.25, 2.0])
    n = 300

    def train():
        for _ in range(n):
            y = w * x
            if how == "hooked":  # the general loop
                y.register_hook(lambda g: g)
            y.sum().backward()

    run_threads(train, train)
    assert w.grad._data.tolist() == (2 * n * x._data).tolist()


@pytest.mark.parametrize("how", ["backward", "grad"])
def test_backward_in_one_thread_while_another_appends_to_the_same_tape(fast_switching, how):
    s = torch.tensor(0.5, requires_grad=True)
    c = torch.tensor(2.0, requires_grad=True)
    steps = 3 * tapes.CHUNK
    sides = []
    finished = threading.Event()

    def append():
        y = s
        for k in range(steps):
            y = y + s  # saves nothing: the other thread's backward frees none of this chain
            if k % 40 == 0:
                sides.append(y * c)  # on this thread's tape, which the other reads
        finished.set()
        return y

    result = []
    taken = []

    def read():
        while not finished.is_set() or len(taken) < len(sides):
            if len(taken) < len(sides):
                side = sides[len(taken)]
                if how == "backward":
                    side.backward()  # the lean path: unpacks, frees and repacks the tape
                    taken.append(c.grad._data.item())
                else:  # the general one: node objects reading records as the owner seals
                    taken.append(torch.autograd.grad(side, [c])[0]._data.item())

    run_threads(lambda: result.append(append()), read)
    y = result[0]
    assert len(y.grad_fn._tape) == steps + len(sides)  # every record the first thread appended
    (g,) = torch.autograd.grad(y * y, [s])
    assert g.item() == 2 * y.item() * (steps + 1)
    want = [0.5 * (k + 2) for k in range(0, steps, 40)]
    if how == "backward":
        assert c.grad.item() == sum(want)
    else:
        assert taken == want


def test_an_in_place_change_in_one_thread_while_another_records(fast_switching):
    def changer(errors):
        for k in range(200):
            x = torch.tensor([1.0, 2.0], requires_grad=True)
            y = x * 2
            if k % 2:
                y.add_(1)  # before its use: no error
            z = y * y
            if not k % 2:
                y.add_(1)  # after its use: PyTorch's error at backward
            try:
                z.sum().backward()
                errors.append(None)
            except RuntimeError as exc:
                assert "modified by an inplace operation" in str(exc)
                errors.append(k)

    errors = []
    want = expected(3, 150, "backward")
    got = []

    def recorder():
        model = Model(3)
        got.extend(model.step(k, "backward") for k in range(150))

    run_threads(lambda: changer(errors), recorder)
    assert [e for e in errors if e is not None] == list(range(0, 200, 2))
    assert differences(got, want) == 0
