"""Tensors and explanations as HTML, for notebooks (Jupyter calls `_repr_html_`).

Loaded only when a notebook asks, so `import autodiff` stays as quick as it was. The text is
the one `repr` and `print` give (PyTorch's layout), set in a small card that names the shape,
the dtype, the node that made it and, after backward, the gradient; every piece is escaped.
"""

from __future__ import annotations

from html import escape

from ._formatting import tensor_repr

CARD = ('<div class="autodiff" style="font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; '
        'font-size: 12px; line-height: 1.4">{}</div>')
PRE = '<pre style="margin: 0.2em 0; padding: 0; background: none; white-space: pre">{}</pre>'
META = '<span style="opacity: 0.7">{}</span>'


def tensor_html(tensor) -> str:
    facts = [f"shape {list(tensor.shape)}", str(tensor.dtype).replace("autodiff.", "")]
    if tensor.device.type != "cpu":
        facts.append(str(tensor.device))
    if tensor.grad_fn is not None:
        facts.append(f"grad_fn {type(tensor.grad_fn).__name__}")
    elif tensor.requires_grad:
        facts.append("leaf, requires grad")
    parts = [PRE.format(escape(tensor_repr(tensor))), META.format(escape(" · ".join(facts)))]
    if tensor._grad is not None:
        parts.append(PRE.format(escape("grad: " + tensor_repr(tensor._grad))))
    return CARD.format("".join(parts))


def text_html(text: str) -> str:
    """Plain text (an explanation's, say) in the same card."""
    return CARD.format(PRE.format(escape(text)))
