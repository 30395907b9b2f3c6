"""Grad modes: whether operations are recorded for backward. Thread-local, as in PyTorch."""

from __future__ import annotations

import functools
import inspect
import threading
import warnings


class _GradState(threading.local):
    def __init__(self) -> None:
        self.enabled = True
        self.inference = False

    def __setattr__(self, name: str, value) -> None:
        threading.local.__setattr__(self, name, value)
        if name == "enabled":  # kept in step with EVERYWHERE
            if value:
                _disabled_in.discard(threading.get_ident())
            else:
                _disabled_in.add(threading.get_ident())
            EVERYWHERE.enabled = not _disabled_in


class _Everywhere:
    """Whether grad mode is on in every thread: what each operation reads first, since reading a
    thread-local costs four plain reads (`EVERYWHERE.enabled or STATE.enabled` is this thread's
    mode)."""

    __slots__ = ("enabled",)


EVERYWHERE = _Everywhere()
EVERYWHERE.enabled = True
_disabled_in: set = set()  # the threads whose grad mode is off
STATE = _GradState()


class _ForwardState:
    """Forward-mode AD (autograd/forward_ad.py): the open level's token (None: no level), and
    the dual results that backward formulas may read again."""

    def __init__(self) -> None:
        self.token = None
        self.results: dict = {}
        self.hooks = None  # what the level pushed (ops/hooks.py), for its exit to restore


FORWARD_AD = _ForwardState()


def is_grad_enabled() -> bool:
    return STATE.enabled


def is_inference_mode_enabled() -> bool:
    return STATE.inference


class _GradModeContext:
    """Base for grad-mode switches usable as `with` blocks and as decorators."""

    def _new(self):
        return type(self)()

    def __call__(self, func):
        if inspect.isclass(func):
            warnings.warn("Decorating classes is deprecated and will be disabled in future versions. You should only "
                          "decorate functions or methods. To preserve the current behavior of class decoration, you "
                          "can directly decorate the `__init__` method and nothing else.", FutureWarning, stacklevel=2)
            cls = func
            # As PyTorch: the class itself is built in the mode.
            func = lambda *args, **kwargs: cls(*args, **kwargs)  # noqa: E731
        if inspect.isgeneratorfunction(func):
            return self._wrap_generator(func)

        @functools.wraps(func)
        def run_in_mode(*args, **kwargs):
            with self._new():
                return func(*args, **kwargs)

        return run_in_mode

    def _wrap_generator(self, func):
        """A generator runs in the mode each time it resumes, and its caller in its own (PyTorch's rule)."""

        @functools.wraps(func)
        def generate_in_mode(*args, **kwargs):
            generator = func(*args, **kwargs)
            try:
                with self._new():
                    response = generator.send(None)
                while True:
                    try:
                        request = yield response
                    except GeneratorExit:
                        with self._new():
                            generator.close()
                        raise
                    except BaseException as error:
                        with self._new():
                            response = generator.throw(error)
                    else:
                        with self._new():
                            response = generator.send(request)
            except StopIteration as done:
                return done.value

        return generate_in_mode

    def _switch(self, enabled: bool, inference: bool | None = None) -> None:
        self._previous = (STATE.enabled, STATE.inference)
        STATE.enabled = enabled
        if inference is not None:
            STATE.inference = inference

    def __exit__(self, *exc_info) -> None:
        STATE.enabled, STATE.inference = self._previous


class _NoArgumentContext(_GradModeContext):
    """`@no_grad` and `@no_grad()` both decorate, as in PyTorch 2."""

    def __new__(cls, orig_func=None):
        if orig_func is None:
            return super().__new__(cls)
        return cls()(orig_func)

    def __init__(self, orig_func=None) -> None:
        pass


class no_grad(_NoArgumentContext):
    """Nothing computed inside is recorded: results have requires_grad=False."""

    def __enter__(self) -> None:
        self._switch(False)


class enable_grad(_NoArgumentContext):
    """Record operations again, e.g. inside a `no_grad` region."""

    def __enter__(self) -> None:
        self._switch(True)


class set_grad_enabled(_GradModeContext):
    """Turn recording on or off; takes effect at once, and as a `with` block restores on exit."""

    def __init__(self, mode: bool) -> None:
        self._previous = (STATE.enabled, STATE.inference)
        self.mode = bool(mode)
        STATE.enabled = self.mode

    def _new(self):
        return set_grad_enabled(self.mode)

    def __call__(self, func):
        # As a decorator it switches only inside the function: the switch its construction
        # made at once is undone here, as PyTorch does.
        STATE.enabled = self._previous[0]
        return super().__call__(func)

    def __enter__(self) -> None:
        pass


class inference_mode(_GradModeContext):
    """Like `no_grad`, for code that will never need gradients.

    PyTorch additionally marks tensors made here as inference tensors; autodiff does not,
    so such tensors may later be used in recorded operations.
    """

    def __new__(cls, mode=True):
        if callable(mode):
            return cls()(mode)
        return super().__new__(cls)

    def __init__(self, mode: bool = True) -> None:
        self.mode = bool(mode)

    def _new(self):
        return inference_mode(self.mode)

    def __enter__(self) -> None:
        if self.mode:
            self._switch(False, inference=True)
        else:
            self._switch(STATE.enabled, inference=False)
