"""backend.quiet() and unquiet(): NumPy's floating-point warnings off for a stretch of code."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from autodiff import backend


@pytest.mark.parametrize("private", [True, False], ids=["numpy-2-state", "errstate"])
def test_quiet_silences_numpy_s_warnings_and_unquiet_restores_them(private, monkeypatch):
    """backend.quiet() is np.errstate(all="ignore") without its object (NumPy 2's private state;
    errstate itself where that is missing): the same silence, and the same state after."""
    if not private:
        monkeypatch.setattr(backend, "_ERROR_STATE", None)
    before = np.geterr()
    with np.errstate(all="warn"):
        token = backend.quiet()
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("error")
                assert np.isinf(np.float64(1.0) / np.float64(0.0))
                assert np.isnan(np.log(np.array([-1.0])))[0]
        finally:
            backend.unquiet(token)
        with pytest.warns(RuntimeWarning):
            np.log(np.array([-1.0]))
    assert np.geterr() == before
