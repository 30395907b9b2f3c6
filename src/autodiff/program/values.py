"""Results as plain Python: a tensor's values on the host. Numbers, lists and the words for
NaN and the infinities are autodiff/codec.py's (to_python, for_json), named here too for the
layers above."""

from __future__ import annotations

from ..codec import to_json as for_json
from ..codec import to_python

__all__ = ["for_json", "host", "to_python"]


def host(value):
    """A tensor's values as a NumPy array on the host (or None)."""
    if value is None:
        return None
    return value.numpy(force=True)  # force: whether it requires grad or not, as detach().numpy() would
