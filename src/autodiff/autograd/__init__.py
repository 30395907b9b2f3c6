"""autodiff.autograd: backward and grad, custom Functions, checks, functional transforms.

Grad modes and anomaly detection load at once; the rest needs `Tensor`, which imports this
package, so those names load on first use.
"""

from importlib import import_module

from .anomaly import detect_anomaly, is_anomaly_check_nan_enabled, is_anomaly_enabled, set_detect_anomaly
from .grad_mode import (
    enable_grad,
    inference_mode,
    is_grad_enabled,
    is_inference_mode_enabled,
    no_grad,
    set_grad_enabled,
)

_LAZY = {
    "backward": ("engine", "backward"),
    "grad": ("engine", "grad"),
    "Function": ("function", "Function"),
    "FunctionCtx": ("function", "FunctionCtx"),
    "once_differentiable": ("function", "once_differentiable"),
    "gradcheck": ("gradcheck", "gradcheck"),
    "gradgradcheck": ("gradcheck", "gradgradcheck"),
    "GradcheckError": ("gradcheck", "GradcheckError"),
    "functional": ("functional", None),
    "function": ("function", None),
    "graph": ("node", None),
    "forward_ad": ("forward_ad", None),
}

__all__ = [
    "backward",
    "grad",
    "Function",
    "FunctionCtx",
    "once_differentiable",
    "gradcheck",
    "gradgradcheck",
    "GradcheckError",
    "functional",
    "forward_ad",
    "no_grad",
    "enable_grad",
    "set_grad_enabled",
    "inference_mode",
    "is_grad_enabled",
    "is_inference_mode_enabled",
    "set_detect_anomaly",
    "detect_anomaly",
    "is_anomaly_enabled",
    "is_anomaly_check_nan_enabled",
]


def __getattr__(name: str):
    try:
        module_name, attribute = _LAZY[name]
    except KeyError:
        raise AttributeError(f"module 'autodiff.autograd' has no attribute {name!r}") from None
    module = import_module(f".{module_name}", __name__)
    # Importing `.gradcheck` binds the module to the name `gradcheck` here: every name that
    # module gives is set now, so `gradcheck` is the function whichever name was asked first.
    for other, (other_module, other_attribute) in _LAZY.items():
        if other_module == module_name and other_attribute is not None:
            globals()[other] = getattr(module, other_attribute)
    value = module if attribute is None else getattr(module, attribute)
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(_LAZY))
