"""`view` accepts exactly what PyTorch's accepts: ops that PyTorch computes into a new contiguous
tensor (flip, advanced indexing, softmax, reductions along a dim, cat, stack...) give row-major
data here too, and views, transposes and clones keep their layout as there.
"""

import pytest

import autodiff

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.torch

# Elementwise ops on operands of different layouts: PyTorch follows the first operand, NumPy
# (and so autodiff) gives row-major data; see docs/guide.md, "Where autodiff differs".
DIFFERS_ON_PURPOSE = {"add_t_c", "maximum_t"}

CASES = {
 'flip': lambda L, x: L.flip(x, (0,)),
 'flip_t': lambda L, x: L.flip(x.t(), (1,)),
 'fancy': lambda L, x: x[[1, 0]],
 'fancy_t': lambda L, x: x.t()[[1, 0]],
 'fancy_col': lambda L, x: x[:, [1, 0]],
 'mask': lambda L, x: x.t()[x.t() > 0],
 'softmax_t': lambda L, x: L.softmax(x.t(), 0),
 'softmax_t1': lambda L, x: L.softmax(x.t(), 1),
 'log_softmax_t': lambda L, x: L.log_softmax(x.t(), 0),
 'logsumexp_t': lambda L, x: L.logsumexp(x.t().unsqueeze(0), 0),
 'mean_t': lambda L, x: L.mean(x.t().unsqueeze(2), 2),
 'sum_t': lambda L, x: L.sum(x.t().unsqueeze(2), 2),
 'prod_t': lambda L, x: L.prod(x.t().unsqueeze(2), 2),
 'max_t': lambda L, x: L.max(x.t().unsqueeze(2), 2)[0],
 'cat_t': lambda L, x: L.cat([x.t(), x.t()], 0),
 'cat_t1': lambda L, x: L.cat([x.t(), x.t()], 1),
 'stack_t': lambda L, x: L.stack([x.t(), x.t()], 0),
 'exp_t': lambda L, x: L.exp(x.t()),
 'mul_t': lambda L, x: x.t() * 2,
 'add_tt': lambda L, x: x.t() + x.t(),
 'add_t_c': lambda L, x: x.t() + x,
 'clone_t': lambda L, x: x.t().clone(),
 'where_t': lambda L, x: L.where(x.t() > 0, x.t(), 0.0),
 'mm_t': lambda L, x: x.t() @ x,
 'mm_tt': lambda L, x: (x @ x.t()).t(),
 'relu_t': lambda L, x: L.relu(x.t()),
 'cumsum_t': lambda L, x: L.cumsum(x.t(), 0),
 'expand': lambda L, x: x[0:1].expand(3, 3),
 'slice_step': lambda L, x: x[::2],
 'slice_col': lambda L, x: x[:, 1:],
 'transpose_back': lambda L, x: x.t().t(),
 'permute3': lambda L, x: x.reshape(3, 3, 1).permute(2, 0, 1),
 'maximum_t': lambda L, x: L.maximum(x.t(), x),
 'pow_t': lambda L, x: x.t() ** 2,
 'div_t': lambda L, x: 1 / (x.t() + 10),
 'neg_t': lambda L, x: -x.t(),
 'to_t': lambda L, x: x.t().to(L.float32),
 'index_put_t': lambda L, x: _put(x.t()),
 'sum_dim0_t': lambda L, x: x.t().sum(0, keepdim=True).expand(3, 3) * 1,
 'bmm_t': lambda L, x: (x.reshape(1, 3, 3).transpose(1, 2) @ x.reshape(1, 3, 3)),
 'matmul_vec': lambda L, x: (x.t() @ x[0]),
 'select_t': lambda L, x: x.t()[0],
 'diag_like': lambda L, x: x.t()[:, 0],
 'sigmoid_t': lambda L, x: L.sigmoid(x.t()),
 'squeeze_t': lambda L, x: x.t().unsqueeze(0).squeeze(0),
 'clamp_t': lambda L, x: L.clamp(x.t(), -1, 1),
 'abs_t': lambda L, x: L.abs(x.t()),
}


def _put(x):
    y = x.clone()
    y[0] = 5.0
    return y


def _viewable(lib, case) -> bool:
    x = lib.arange(9.0).reshape(3, 3) - 4
    try:
        CASES[case](lib, x).view(-1)
    except RuntimeError:
        return False
    return True


@pytest.mark.parametrize("case", sorted(set(CASES) - DIFFERS_ON_PURPOSE))
def test_view_accepts_what_pytorch_accepts(case):
    assert _viewable(autodiff, case) == _viewable(torch, case)


@pytest.mark.parametrize("case", sorted(DIFFERS_ON_PURPOSE))
def test_view_after_mixed_layouts_is_accepted_where_pytorch_refuses(case):
    assert _viewable(autodiff, case) and not _viewable(torch, case)
