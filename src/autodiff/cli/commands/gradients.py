"""`autodiff grad` at one point (commands/grad.py runs it, with every option of the command line)."""

from __future__ import annotations

from ..render import emit


def show_gradients(source, values, *, wrt, retain, output, grad_output, tree, check, order, atol, rtol, chosen,
                   options, mode: str = "reverse", eps: float | None = None):
    """`autodiff grad` at one point: run forward and backward, check if asked, show the result."""
    from ...program import check as check_gradients
    from ...program import differentiate
    from ..program_input import parse_names

    result = differentiate(source, values, wrt=parse_names(wrt, "--wrt"), retain=parse_names(retain, "--retain"),
                           output=output, grad_output=grad_output, order=order, graph=tree, options=options,
                           mode=mode)
    if check and result.differentiable:
        check_gradients(result, atol=atol, rtol=rtol, eps=eps)
    emit("grad", result, chosen)
    return result
