"""Statements that compute a few root expressions: every node used more than once is computed
once and named (after the program's own variable where one holds that value), and so is a node
that would nest deeper than `MAX_INLINE` levels, so that no printed line, and no walk over it,
grows with the input's length. The printers (printing.py) write each statement's right-hand side.
"""

from __future__ import annotations

from . import expr as E
from .printing import MAX_INLINE, Printer


class Statements:
    """Statements computing `roots` ({name: expression}): shared nodes once, named.

    `labels` maps expressions to the names the user gave them (the forward's variables);
    `taken` are names no temporary may use.
    """

    def __init__(self, roots: dict, labels: dict | None = None, taken=()) -> None:
        self.roots = roots
        uses: dict = {}
        order = E.postorder(list(roots.values()), uses)
        self.operations = {e.op for e in order}  # every operation the program uses
        taken = set(taken) | set(roots)
        self.names: dict = {}
        depth: dict = {}
        counter = 0
        labels = labels or {}
        for e in order:
            op = e.op
            if op == "sym" or op == "size" or op == "const" or (op == "tensor" and e.args[0].array.size <= 4):
                depth[e] = 0
                continue
            d = 0
            for c in e.parts:
                if depth[c] > d:
                    d = depth[c]
            d += 1
            shared = (uses.get(e, 0) > 1 and not _trivial(e)) or (op == "tensor" and e in labels)
            if shared or d > MAX_INLINE:
                label = labels.get(e)
                if label is None or label in taken:
                    counter += 1
                    label = f"t{counter}"
                    while label in taken:
                        counter += 1
                        label = f"t{counter}"
                taken.add(label)
                self.names[e] = label
                d = 0
            depth[e] = d
        self.order = [e for e in order if e in self.names]

    def written(self, printer: Printer | None = None):
        """(name, expression, right-hand side text) per statement, each defined before use, the
        roots last; `printer` writes them (the language's by default; it keeps any names it has)."""
        printer = printer or Printer()
        printer.names.update(self.names)
        for e in self.order:
            name = printer.names.pop(e)  # a statement writes its own value, not its name
            yield name, e, printer.text(e)
            printer.names[e] = name
        for name, e in self.roots.items():
            yield name, e, printer.text(e)

    def statements(self, sizes=None) -> list:
        """[(name, right-hand side text)] in the expression language (named sizes by name)."""
        return [(name, text) for name, _, text in self.written(Printer(sizes=sizes))]


# A Kronecker map inside a chained one (then_map) is written as its factors, in one einsum:
# never computed on its own, so never named.
_MAPS = ("kron_map", "then_map", "jacobian_then")


def _trivial(e: E.Expr) -> bool:
    """Too small to be worth a name: -x, 2 * x, a transposed input."""
    if e.op == "t":
        return e.args[0].op == "sym"
    if e.op == "eye" or e.op in _MAPS:
        return True
    if e.op == "mul" and len(e.args[1]) == 1:
        (base, exponent), = e.args[1]
        return exponent == 1.0 and base.op == "sym"
    return False
