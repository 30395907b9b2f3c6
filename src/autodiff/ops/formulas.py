"""Local derivatives as text, one row per op and one entry per differentiable input.

The numbers always come from the registry's own formulas (run by the node); this table only
says in words what they compute, for `autodiff explain`. A placeholder `{name}` stands for the
op's argument of that name (`{input}`, `{other}`, `{exponent}`) or `{result}`, its output; the
explanation writes each as its variable, its source text or its value. Entries of the form
`g ↦ ...` are vector-Jacobian products (the gradient `g` arriving, mapped to what passes on),
for ops whose derivative is not one number per element. An op missing here is shown by its
node's name (`∂ MulBackward0`); tests/program/test_explain.py walks the registry so that none is.
A template names only what the node has: the input of its own edge, the saved values its
derivative takes, or `{result}` where that is saved, never a bare argument name as a word.
"""

from __future__ import annotations

_ONE = "1"
_EACH = "1 for each element"
_RESHAPE = "g ↦ reshape(g, {input_shape})"
_MEAN = ", ÷ n for the mean"  # the losses' reduction
_WEIGHTED = ", ÷ the targets' summed weights for the mean"

FORMULAS: dict[str, dict[str, str]] = {
    "where": {"input": "1 where {condition}, else 0", "other": "0 where {condition}, else 1"},
    "clamp": {"input": "1 where {min} ≤ {input} ≤ {max}, else 0"},
    "maximum": {"input": "1 where {input} > {other}, ½ at a tie, else 0",
                "other": "1 where {other} > {input}, ½ at a tie, else 0"},
    "minimum": {"input": "1 where {input} < {other}, ½ at a tie, else 0",
                "other": "1 where {other} < {input}, ½ at a tie, else 0"},
    "exp": {"input": "exp({input})"},
    "log": {"input": "1/{input}"},
    "sqrt": {"input": "1/(2·sqrt({input}))"},
    "sin": {"input": "cos({input})"},
    "cos": {"input": "-sin({input})"},
    "tan": {"input": "1 + tan²({input})"},
    "tanh": {"input": "1 - tanh²({input})"},
    "sigmoid": {"input": "σ({input})·(1 - σ({input}))"},
    "relu": {"input": "1 if {input} > 0 else 0"},
    "abs": {"input": "sign({input})"},
    "sign": {"input": "0"},
    "log1p": {"input": "1/(1 + {input})"},
    "expm1": {"input": "exp({input})"},
    "add": {"input": _ONE, "other": _ONE},
    "sub": {"input": _ONE, "other": "-1"},
    "rsub": {"input": "-1"},
    "mul": {"input": "{other}", "other": "{input}"},
    "div": {"input": "1/{other}", "other": "-{input}/{other}²"},
    "div_scalar": {"input": "1/{other}"},
    "neg": {"input": "-1"},
    "reciprocal": {"input": "-1/{input}²"},
    "floor": {"input": "0"},
    "ceil": {"input": "0"},
    "remainder": {"input": _ONE, "other": "-floor({input}/{other})"},
    "remainder_scalar": {"input": _ONE},
    "pow": {"input": "{exponent}·{input}^({exponent} - 1)"},
    "pow_tensor": {"input": "{exponent}·{input}^({exponent} - 1)", "exponent": "{input}^{exponent}·log({input})"},
    "pow_scalar_base": {"exponent": "{input}^{exponent}·log({input})"},
    "expand": {"input": "g ↦ g summed over the copies, to shape {input_shape}"},
    "sum_to": {"input": "g ↦ expand(g, {input_shape})"},
    "t": {"input": "g ↦ gᵀ"},
    "transpose": {"input": "g ↦ transpose(g, {dim0}, {dim1})"},
    "permute": {"input": "g ↦ g with the dimensions {dims} put back"},
    "view": {"input": _RESHAPE},
    "reshape_alias": {"input": _RESHAPE},
    "unsafe_view": {"input": _RESHAPE},
    "alias": {"input": _ONE},
    "clone": {"input": _ONE},
    "copy": {"input": "0 (its values are overwritten)", "src": "g ↦ g summed back to the shape of {src}"},
    "unsqueeze": {"input": "g ↦ squeeze(g, {dim})"},
    "squeeze": {"input": _RESHAPE},
    "squeeze_dim": {"input": _RESHAPE},
    "squeeze_": {"input": _RESHAPE},
    "squeeze_dims": {"input": _RESHAPE},
    "flip": {"input": "g ↦ flip(g, {dims})"},
    "cat": {"tensors": "g ↦ the part of g along dim {dim} where this tensor was put"},
    "stack": {"tensors": "g ↦ the slice of g along dim {dim} where this tensor was put"},
    "to_dtype": {"input": _ONE},
    "to_device": {"input": _ONE},
    "select": {"input": "1 at the selected elements, else 0"},
    "select_backward": {"input": "g ↦ select(g, {dim}, {index})"},
    "slice": {"input": "1 at the selected elements, else 0"},
    "slice_backward": {"input": "g ↦ g[{start}:{stop}:{step}] along dim {dim}"},
    "index": {"input": "1 at the selected elements (added up where selected again), else 0"},
    "index_backward": {"input": "g ↦ g at the indexed elements"},
    "index_put": {"input": "0 at the written elements, else 1", "values": "g ↦ g at the written elements"},
    "zero_region": {"input": "0 at the filled elements, else 1"},
    "sum": {"input": _EACH},
    "sum_dim": {"input": _EACH},
    "mean": {"input": "1/n for each of the n elements"},
    "mean_dim": {"input": "1/n for each of the n elements"},
    "prod": {"input": "the product of the other elements of {input}"},
    "prod_dim": {"input": "the product of the other elements of each slice of {input}"},
    "cumsum": {"input": "g ↦ reversed cumulative sum of g"},
    "max": {"input": "1 at the largest element (shared at a tie), else 0"},
    "min": {"input": "1 at the smallest element (shared at a tie), else 0"},
    "max_dim": {"input": "1 at the largest element of each slice, else 0"},
    "min_dim": {"input": "1 at the smallest element of each slice, else 0"},
    "logsumexp": {"input": "softmax({input})"},
    "softmax": {"input": "g ↦ {result}·(g - Σ g·{result})"},
    "log_softmax": {"input": "g ↦ g - exp({result})·Σ g"},
    "mm": {"input": "g ↦ g @ {mat2}ᵀ", "mat2": "g ↦ {input}ᵀ @ g"},
    "bmm": {"input": "g ↦ g @ {mat2}ᵀ", "mat2": "g ↦ {input}ᵀ @ g"},
    "mv": {"input": "g ↦ g ⊗ {vec}", "vec": "g ↦ {input}ᵀ @ g"},
    "dot": {"input": "{other}", "other": "{input}"},
    "addmm": {"input": _ONE, "mat1": "g ↦ g @ {mat2}ᵀ", "mat2": "g ↦ {mat1}ᵀ @ g"},
    "mse_loss": {"input": "2·({input} - {target})" + _MEAN, "target": "-2·({input} - {target})" + _MEAN},
    "binary_cross_entropy": {
        "input": "{weight}·({input} - {target})/({input}·(1 - {input}))" + _MEAN,
        "target": "{weight}·log((1 - {input})/{input})" + _MEAN},
    "binary_cross_entropy_with_logits": {
        "input": "{weight}·((1 + ({pos_weight} - 1)·{target})·σ({input}) - {pos_weight}·{target})" + _MEAN,
        "target": "{weight}·(log(1 - σ({input})) - {pos_weight}·log(σ({input})))" + _MEAN},
    "nll_loss": {"input": "-{weight} at each row's {target} element, else 0" + _WEIGHTED},
    "nll_loss2d": {"input": "-{weight} at each position's {target} element, else 0" + _WEIGHTED},
}

# Why an op may pass on a zero gradient: the sentence `--why` uses, by node name.
ZERO_CAUSES: dict[str, str] = {
    "ReluBackward0": "relu at a value that is not positive",
    "AbsBackward0": "abs at 0",
    "MaximumBackward0": "the losing side of maximum",
    "MinimumBackward0": "the losing side of minimum",
    "MaxBackward0": "an element that is not the largest of max",
    "MaxBackward1": "an element that is not the largest of max",
    "MinBackward0": "an element that is not the smallest of min",
    "MinBackward1": "an element that is not the smallest of min",
    "ClampBackward1": "clamp outside its range",
    "SignBackward0": "sign, whose derivative is 0",
    "FloorBackward0": "floor, whose derivative is 0",
    "CeilBackward0": "ceil, whose derivative is 0",
    "WhereBackward0": "the branch of where not taken",
}


def formula_text(op_name: str, input_name: str) -> str | None:
    """The template for the derivative of op `op_name` by its argument `input_name`, or None."""
    return FORMULAS.get(op_name, {}).get(input_name)
