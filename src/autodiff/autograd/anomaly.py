"""Anomaly detection: name the backward node that first produced NaN, and where it came from."""

from __future__ import annotations

import os
import sys
import threading
import warnings
import weakref


class _AnomalyState:
    __slots__ = ("enabled", "check_nan")

    def __init__(self) -> None:
        self.enabled = False
        self.check_nan = True


ANOMALY = _AnomalyState()

# In anomaly mode, a node recorded while another node's backward runs (create_graph) has that
# node as its parent, as in PyTorch: an error in it also shows the parent's forward stack.
_PARENTS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_RUNNING = threading.local()


def forward_trace(node) -> list:
    """The stack that records `node`, up to the op's caller; remembers the node whose backward is running."""
    running = getattr(_RUNNING, "nodes", None)
    if running:
        _PARENTS[node] = running[-1]
    return forward_stack()


_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep


def forward_stack() -> list:
    """The formatted stack of the program that called an op, up to its line: autodiff's own frames
    at its end (how deep an op records itself varies by path) are left out, as PyTorch's trace ends
    at the user's line. traceback is imported here: anomaly mode is rare, and no start needs it."""
    import traceback

    frames = traceback.extract_stack()
    while frames and os.path.abspath(frames[-1].filename).startswith(_PACKAGE):  # as imported: maybe ../src
        frames.pop()
    return traceback.format_list(frames)


class running:
    """`with running(node):` while node's backward runs in anomaly mode."""

    __slots__ = ("node",)

    def __init__(self, node) -> None:
        self.node = node

    def __enter__(self) -> None:
        if not hasattr(_RUNNING, "nodes"):
            _RUNNING.nodes = []
        _RUNNING.nodes.append(self.node)

    def __exit__(self, *exc_info) -> None:
        _RUNNING.nodes.pop()


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
    """The warnings PyTorch gives before an anomaly error: the forward stack of the culprit, then
    of each node whose backward recorded it. A warning that raises (warnings as errors) is written
    to standard error instead, so that the error itself is what propagates."""
    _warn(_stack_message(node, node.name(), False))
    parent = _PARENTS.get(node)
    while parent is not None:
        _warn(_stack_message(parent, parent.name(), True))
        parent = _PARENTS.get(parent)


def _stack_message(node, name: str, is_parent: bool) -> str:
    trace = getattr(node, "_trace", None)
    if not trace:
        return (f"Error detected in {name}. No forward pass information available. Enable detect anomaly "
                "during forward pass for more information.")
    stack = "".join(trace)
    if is_parent:
        return (f"\n\nPrevious calculation was induced by {name}. Traceback of forward call that induced the "
                f"previous calculation:\n{stack}")
    return f"Error detected in {name}. Traceback of forward call that caused the error:\n{stack}"


def _warn(message: str) -> None:
    try:
        warnings.warn(message, UserWarning, stacklevel=5)
    except Exception as raised:  # noqa: BLE001 - a warnings filter set to "error"
        sys.stderr.write(f"{type(raised).__name__}: {raised}\n")
