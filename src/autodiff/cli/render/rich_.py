"""Output for people: Rich tables and trees (imported only when this format is used)."""

from __future__ import annotations

from ..._text import shown

from .fit import Column, Number, fitted
from .values import human_text

MAX_TREE_DEPTH = 60  # deeper chains are cut with a note: nobody reads further


def _heading(quantity, source: str, width: int, note: str = ""):
    """`e = 17.51   shape []   float64   grad_fn AddBackward0   (file)`: the details move to the
    next lines when the terminal is narrow, never breaking one of them."""
    from rich.text import Text

    text = Text.assemble((quantity.name, "bold"), " = ")
    value = human_text(quantity.value, indent=len(quantity.name) + 3)
    text.append(value, style="bold")
    details = [f"shape {list(quantity.shape)}", quantity.dtype]
    if quantity.grad_fn:
        details.append(f"grad_fn {quantity.grad_fn}")
    details.append(f"({shown(source)}{note})")
    column = len(text.plain.split("\n")[-1])
    for detail in details:
        if column + 3 + len(detail) <= width:
            text.append("   " + detail, style="dim")
            column += 3 + len(detail)
        else:
            text.append("\n  " + detail, style="dim")
            column = 2 + len(detail)
    return text


def _gradient(quantity) -> Number:
    """The gradient cell: the numbers, or why there are none (dimmed)."""
    if quantity.grad is not None:
        return Number(quantity.grad)
    return Number(quantity.note or "—", "dim")


def _inputs_table(quantities, width: int, with_gradients: bool = True, gradient_title: str = "gradient"):
    from rich.text import Text

    columns = [Column("input", kind="key"), Column("value", "right", "number"), Column("shape"),
               Column("requires_grad", "center"), Column("is_leaf", "center"), Column("grad_fn", kind="label")]
    if with_gradients:
        columns.append(Column(gradient_title, "right", "number"))
    rows = []
    for q in quantities:
        cells = [Text(q.name, style="bold" if q.role == "input" else "dim"), Number(q.value),
                 str(list(q.shape)), "yes" if q.requires_grad else "no", "yes" if q.is_leaf else "no", q.grad_fn or "—"]
        if with_gradients:
            cells.append(_gradient(q) if q.role == "input" else Number("constant", "dim"))
        rows.append(cells)
    return fitted(columns, rows, width, "input")


def _variables_table(quantities, width: int, with_gradients: bool = True):
    from rich.text import Text

    columns = [Column("variable", kind="key"), Column("value", "right", "number"), Column("shape"),
               Column("grad_fn", kind="label")]
    if with_gradients:
        columns.append(Column("gradient", "right", "number"))
    rows = []
    for q in quantities:
        cells = [Text(q.name, style="bold"), Number(q.value), str(list(q.shape)), q.grad_fn or "—"]
        if with_gradients:
            cells.append(_gradient(q))
        rows.append(cells)
    return fitted(columns, rows, width, "variable")


def grad(report, console) -> None:
    console.print(_heading(report.output, report.source, console.width))
    console.print()
    if report.inputs or report.constants:
        title = f"Jacobian ∂{report.output.name}/∂input" if report.jacobian else "gradient"
        console.print(_inputs_table(report.inputs + report.constants, console.width, gradient_title=title))
    shown = report.variables + ([report.output] if report.retained_output else [])
    if shown:
        console.print()
        console.print(_variables_table(shown, console.width))
    if report.hessian is not None:
        console.print()
        _hessian(report, console)
    if report.check is not None:
        console.print()
        _check(report.check, console)
    if report.graph is not None:
        console.print()
        console.print(tree(report.graph, f"grad_fn graph of {report.output.name}", console.width))


def _hessian(report, console) -> None:
    from rich.text import Text

    names = [q.name for q in report.inputs if q.requires_grad]
    output = report.output.name
    console.print(Text(f"Hessian: ∂²{output} / ∂row ∂column", style="dim"))
    columns = [Column("", kind="key")] + [Column(f"∂/∂{name}", "right", "number") for name in names]
    rows = [[f"∂/∂{first}"] + [Number(report.hessian[(first, second)]) for second in names] for first in names]
    console.print(fitted(columns, rows, console.width, "row"))


def _check(check, console) -> None:
    from rich.text import Text

    console.print(Text(f"finite differences (relative step {check.eps:g}): ok when "
                       f"|error| <= {check.atol:g} + {check.rtol:g} * |numerical|", style="dim"))
    columns = [Column("input", kind="key"), Column("checked", "right"), Column("max error", "right", "number"),
               Column("analytical", "right", "number"), Column("numerical", "right", "number"), Column("", kind="key")]
    rows = []
    for e in check.entries:
        checked = f"{e.checked:,}" + (f" of {e.total:,}" if e.checked < e.total else "")
        rows.append([Text(e.name, style="bold"), checked, Number(f"{e.max_abs_error:.3g}"), Number(e.analytical),
                     Number(e.numerical), Text("ok", style="green") if e.passed else Text("FAILED", style="bold red")])
    console.print(fitted(columns, rows, console.width, "input"))
    if check.passed:
        console.print(Text(f"check passed: largest error {check.max_abs_error:.3g}", style="green"))
    else:
        failed = ", ".join(e.name for e in check.entries if not e.passed)
        console.print(Text(f"check FAILED for {failed}: largest error {check.max_abs_error:.3g}", style="bold red"))


def _node_label(node, reference: bool = False, edge: str | None = None):
    """A node's line in the tree; `edge`, the local derivative on the edge from its parent
    (--edges local), goes first, as the arrow into it."""
    from rich.text import Text

    text = Text()
    if edge is not None:
        text.append(f"{edge}  ← ", style="green")
    text.append(node.op, style="bold cyan" if node.op != "AccumulateGrad" else "bold green")
    if node.op == "AccumulateGrad":
        text.append(f"  {node.name or 'leaf'}", style="bold")
    elif node.name:
        text.append(f"  {node.name} = {node.source or '…'}", style="bold")
    elif node.source:
        text.append(f"  {node.source}")
    details = [f"shape {list(node.shape)}"]
    if node.line is not None:
        details.insert(0, f"line {node.line}")
    if node.value is not None and node.value.size == 1:
        details.append(f"value {human_text(node.value)}")
    text.append("  (" + ", ".join(details) + ")", style="dim")
    if node.grad is not None:
        from ...chain_rule import values_text  # one line: the numbers (the first few of a large tensor)

        text.append(f"  grad {values_text(node.grad)}", style="magenta")
    if reference:
        text.append("  ↑ shown above", style="dim italic")
    return text


def tree(model, title: str, width: int = 100):
    """The graph as Rich trees, built without recursion; shared nodes are expanded once. A
    branch deeper than the terminal has room for goes on in a tree of its own below, so the
    labels keep their width however deep the graph is."""
    from rich.console import Group
    from rich.text import Text
    from rich.tree import Tree

    root = Tree(Text(title, style="bold"))
    if not model.nodes:
        root.add(Text("(no graph: the output does not depend on anything that requires grad)", style="dim"))
        return root
    room = max(2, min(MAX_TREE_DEPTH, (width - 40) // 4))  # levels of guides (4 columns each) that leave 40 for labels
    nodes = {node.id: node for node in model.nodes}
    children: dict = {}
    for parent, child, position in model.edges:
        children.setdefault(parent, []).append((child, model.edge_labels.get((parent, child, position))))
    trees = [root]
    placed = {model.root: root.add(_node_label(nodes[model.root]))}
    stack = [(model.root, 0, 0)]  # node, depth in the graph, depth in the tree it is drawn in
    continued = []  # (node, depth): branches that go on in a tree of their own
    while stack or continued:
        if not stack:
            node_id, depth = continued.pop(0)
            part = Tree(Text(f"⟨{len(trees)}⟩ continued", style="bold"))
            trees.append(part)
            placed[node_id] = part.add(_node_label(nodes[node_id]))
            stack.append((node_id, depth, 0))
        node_id, depth, level = stack.pop()
        branch = placed[node_id]
        kids = children.get(node_id, [])
        if kids and depth >= MAX_TREE_DEPTH:
            branch.add(Text(f"… {len(kids)} more below (deeper than {MAX_TREE_DEPTH} levels)", style="dim"))
            continue
        if kids and level >= room:
            branch.add(Text(f"↓ continued below in ⟨{len(trees) + len(continued)}⟩", style="dim"))
            continued.append((node_id, depth))
            continue
        expand = []
        for child, edge in kids:
            if child in placed:
                branch.add(_node_label(nodes[child], reference=True, edge=edge))
            else:
                placed[child] = branch.add(_node_label(nodes[child], edge=edge))
                expand.append(child)
        stack.extend((child, depth + 1, level + 1) for child in reversed(expand))
    if model.left_out:
        trees[-1].add(Text(f"… {model.left_out:,} more nodes not shown", style="dim"))
    return trees[0] if len(trees) == 1 else Group(*trees)


def evaluation(report, console) -> None:
    console.print(_heading(report.output, report.source, console.width, ", forward only"))
    if report.inputs or report.constants:
        console.print()
        console.print(_inputs_table(report.inputs + report.constants, console.width, with_gradients=False))
    if report.variables:
        console.print()
        console.print(_variables_table(report.variables, console.width, with_gradients=False))


def graph(report, console) -> None:
    console.print(tree(report.graph, f"grad_fn graph of {report.output.name} ({report.source})", console.width))
