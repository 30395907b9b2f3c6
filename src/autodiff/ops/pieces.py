"""One tensor into many: unbind, split and chunk.

Each piece is the op of its function at one place along `dim` — `unbind` a select, `split` a
slice — named as PyTorch names the node (`UnbindBackward0`, `SplitBackward0`,
`SplitWithSizesBackward0`; chunk is a split, as in PyTorch), and its gradient puts the piece's
gradient back in its place among zeros, so that every piece's gradient flows back and they add
up in the input. PyTorch records one node with an output per piece; here each piece has a node
of its own (output number 0), with the same name, values and gradients.
"""

from __future__ import annotations

from ..tensor import Tensor, number_piece
from .batching import dims
from .dims import normalize_dim
from .indexing import SELECT_BACKWARD, SLICE_BACKWARD, _select_key, _slice_key
from .registry import defop
from .spelling import Spelling
from .surface import along_dim


def _select_piece(xp, input, dim, index):
    return input[_select_key(dim, index)]


def _slice_piece(xp, input, dim, start, stop):
    return input[_slice_key(dim, start, stop, 1)]


def _slice_piece_grad(grad, input_shape, dim, start, stop):
    return SLICE_BACKWARD.apply(grad, input_shape, dim, start, stop, 1)


# Each piece is written as the select or narrow it is.
_SELECTED = Spelling(build=lambda s, x, dim, index: s.call("select", x, dim, index))
_NARROWED = Spelling(build=lambda s, x, dim, start, stop: s.narrow(x, dim, start, stop, 1))

UNBIND = defop(
    "unbind", _select_piece, batch=dims("dim"),
    input=lambda grad, input_shape, dim, index: SELECT_BACKWARD.apply(grad, input_shape, dim, index),
    spelling=_SELECTED,
)
SPLIT = defop("split", _slice_piece, batch=dims("dim"), input=_slice_piece_grad, spelling=_NARROWED)
SPLIT_WITH_SIZES = defop("split_with_sizes", _slice_piece, batch=dims("dim"), input=_slice_piece_grad,
                         spelling=_NARROWED)


def _whole(value, what: str) -> int:
    """An int argument; a whole float (every number of the language is one) is taken as its int."""
    if isinstance(value, Tensor) and value.numel() == 1:
        value = value.item()
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, bool) or not isinstance(value, int):
        if hasattr(value, "__index__"):
            return value.__index__()
        raise TypeError(f"{what} must be an int, not {type(value).__name__}")
    return value


def _sizes_of(sections) -> list:
    """split's list of sizes: a list, a tuple or (in the language) a 1-d tensor of whole numbers."""
    if isinstance(sections, Tensor):
        sections = sections.tolist()
    sizes = []
    for s in sections:
        whole = isinstance(s, int) or (isinstance(s, float) and s.is_integer())
        if not whole or isinstance(s, bool):
            raise TypeError(f"split_with_sizes(): argument 'split_sizes' (position 2) must be tuple of ints, "
                            f"not {type(s).__name__}")
        sizes.append(int(s))
    return sizes


def _pieces(op, input: Tensor, dim: int, sizes) -> tuple:
    start, pieces = 0, []
    for size in sizes:
        pieces.append(op.apply(input, dim, start, start + size))
        start += size
    return _numbered(tuple(pieces))


def _numbered(pieces: tuple) -> tuple:
    """Each recorded piece's place, which PyTorch's error for changing it in place names."""
    for k, piece in enumerate(pieces):
        node = piece.grad_fn
        if node is not None:
            number_piece(node, k)
    return pieces


@along_dim()
def unbind(input: Tensor, dim: int = 0) -> tuple:
    """The slices along `dim`, each without it: a tuple of input.shape[dim] tensors."""
    ndim = input._data.ndim
    dim = _whole(dim, "dim")
    if ndim == 0:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    dim = normalize_dim(dim, ndim)
    return _numbered(tuple(UNBIND.apply(input, dim, i) for i in range(input._data.shape[dim])))


@along_dim()
def split(input: Tensor, split_size_or_sections, dim: int = 0) -> tuple:
    """Pieces along `dim`: of `split_size` each (the last one shorter where it does not divide),
    or of the sizes in a list, which must add up to input.shape[dim]."""
    if input._data.ndim == 0:
        raise RuntimeError("split expects at least a 1-dimensional tensor")
    dim = normalize_dim(_whole(dim, "dim"), input._data.ndim)
    length = input._data.shape[dim]
    if isinstance(split_size_or_sections, (list, tuple)) or (
            isinstance(split_size_or_sections, Tensor) and split_size_or_sections.ndim == 1):
        sizes = _sizes_of(split_size_or_sections)
        if any(s < 0 for s in sizes):
            raise RuntimeError(f"split_with_sizes expects split_sizes have only non-negative entries, but got "
                               f"split_sizes={sizes}")
        if sum(sizes) != length:
            raise RuntimeError(f"split_with_sizes expects split_sizes to sum exactly to {length} (input tensor's "
                               f"size at dimension {dim}), but got split_sizes={sizes}")
        return _pieces(SPLIT_WITH_SIZES, input, dim, sizes)
    size = _whole(split_size_or_sections, "split_size")
    return _pieces(SPLIT, input, dim, _even_sizes(length, size))


def _even_sizes(length: int, size: int) -> list:
    if size < 0:
        raise RuntimeError(f"split expects split_size be non-negative, but got split_size={size}")
    if size == 0:
        if length != 0:
            raise RuntimeError(f"split_size can only be 0 if dimension size is 0, but got dimension size of {length}")
        return [0]
    count = max(-(-length // size), 1)
    return [min(size, length - i * size) for i in range(count)]


@along_dim()
def chunk(input: Tensor, chunks: int, dim: int = 0) -> tuple:
    """`chunks` pieces along `dim` (or fewer), each of ceil(size / chunks) but the last: a split."""
    chunks = _whole(chunks, "chunks")
    if chunks <= 0:
        raise RuntimeError(f"chunk expects `chunks` to be greater than 0, got: {chunks}")
    if input._data.ndim == 0:
        raise RuntimeError("chunk expects at least a 1-dimensional tensor")
    dim = normalize_dim(_whole(dim, "dim"), input._data.ndim)
    length = input._data.shape[dim]
    if length == 0:  # as PyTorch: `chunks` empty pieces
        return _pieces(SPLIT, input, dim, [0] * chunks)
    return _pieces(SPLIT, input, dim, _even_sizes(length, -(-length // chunks)))
