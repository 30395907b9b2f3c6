"""Anomaly detection: name the backward node that first produced NaN, and where it came from."""

from __future__ import annotations

import warnings


class _AnomalyState:
    __slots__ = ("enabled", "check_nan")

    def __init__(self) -> None:
        self.enabled = False
        self.check_nan = True


ANOMALY = _AnomalyState()


def is_anomaly_enabled() -> bool:
    return ANOMALY.enabled


def is_anomaly_check_nan_enabled() -> bool:
    return ANOMALY.check_nan


class set_detect_anomaly:
    """Turn anomaly detection on or off; takes effect at once, and as a `with` block restores on exit.

    While on, each recorded operation remembers the stack that created it, and backward raises
    `RuntimeError: Function 'XBackward0' returned nan values in its 0th output.` at the first
    node whose gradient contains NaN, after a warning that shows that forward stack.
    """

    def __init__(self, mode: bool, check_nan: bool = True) -> None:
        self._previous = (ANOMALY.enabled, ANOMALY.check_nan)
        ANOMALY.enabled = bool(mode)
        ANOMALY.check_nan = bool(check_nan)

    def __enter__(self) -> None:
        pass

    def __exit__(self, *exc_info) -> None:
        ANOMALY.enabled, ANOMALY.check_nan = self._previous


class detect_anomaly:
    """`with detect_anomaly():` turns anomaly detection on inside the block."""

    def __init__(self, check_nan: bool = True) -> None:
        self.check_nan = check_nan
        warnings.warn(
            "Anomaly Detection has been enabled. This mode will increase the runtime and should only "
            "be enabled for debugging.",
            UserWarning,
            stacklevel=2,
        )

    def __enter__(self) -> None:
        self._previous = (ANOMALY.enabled, ANOMALY.check_nan)
        ANOMALY.enabled, ANOMALY.check_nan = True, self.check_nan

    def __exit__(self, *exc_info) -> None:
        ANOMALY.enabled, ANOMALY.check_nan = self._previous


def warn_forward_trace(node) -> None:
    """The warning PyTorch gives before an anomaly error: the forward stack of the culprit."""
    trace = getattr(node, "_trace", None)
    if trace:
        stack = "".join(trace)
        message = f"Error detected in {node.name()}. Traceback of forward call that caused the error:\n{stack}"
    else:
        message = (
            f"Error detected in {node.name()}. No forward pass information available. Enable detect "
            "anomaly during forward pass for more information."
        )
    warnings.warn(message, UserWarning, stacklevel=4)
