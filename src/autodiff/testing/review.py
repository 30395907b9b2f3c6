"""What a pending record (`x.expr.golden.new`) changes in the record it would replace, in
lines for `autodiff test review`: every quantity that moved (old and new), points added and
dropped, settings changed."""

from __future__ import annotations

from .compare import compare_point
from .records import PENDING_SUFFIX, RecordProblem, load, point_key
from .reporting import point_text, value_text


def describe(pending) -> list:
    owner = str(pending)[: -len(PENDING_SUFFIX)]
    try:
        new = load(owner, where=pending) or {}
        old = load(owner)
    except RecordProblem as exc:
        return [f"cannot be compared: {exc}"]
    if old is None:
        return [f"a new record of {len(new.get('points', []))} point(s)"]
    lines = []
    for key in sorted(set(old.get("settings", {})) | set(new.get("settings", {}))):
        before, after = old.get("settings", {}).get(key), new.get("settings", {}).get(key)
        if before != after:
            lines.append(f"setting {key}: {before} -> {after}")
    before = {point_key(p.get("at", {})): p for p in old.get("points", [])}
    after = {point_key(p.get("at", {})): p for p in new.get("points", [])}
    for key, point in after.items():
        at = point.get("at", {})
        if key not in before:
            lines.append(f"added point {point_text(at)}")
            continue
        for m in compare_point(at, before[key], point, 0.0, 0.0):
            lines.append(f"{m.quantity} at {point_text(at)}: {value_text(m.expected)} -> {value_text(m.got)}"
                         f"  ({m.difference})")
    for key, point in before.items():
        if key not in after:
            lines.append(f"dropped point {point_text(point.get('at', {}))}")
    return lines or ["no change in results (only the record's text)"]
