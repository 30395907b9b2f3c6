"""Output for people: Rich tables and trees (imported only when this format is used)."""

from __future__ import annotations

from ..._text import shown

from .values import human_text

MAX_TREE_DEPTH = 60  # deeper chains are cut with a note: nobody reads further


def _heading(quantity, source: str, note: str = ""):
    from rich.text import Text

    text = Text.assemble((quantity.name, "bold"), " = ")
    value = human_text(quantity.value, indent=len(quantity.name) + 3)
    text.append(value, style="bold")
    details = [f"shape {list(quantity.shape)}", quantity.dtype]
    if quantity.grad_fn:
        details.append(f"grad_fn {quantity.grad_fn}")
    text.append("   " + "   ".join(details) + f"   ({shown(source)}{note})", style="dim")
    return text


def _new_table(*columns):
    from rich import box
    from rich.table import Table

    table = Table(box=box.SIMPLE_HEAD, pad_edge=False, show_edge=False)
    for name, justify in columns:
        numeric = name in ("value", "gradient")
        table.add_column(name, justify=justify, no_wrap=not numeric, overflow="fold")
    return table


def _gradient(quantity) -> tuple:
    """The gradient cell: the numbers, or why there are none (dimmed)."""
    if quantity.grad is not None:
        return human_text(quantity.grad), ""
    return (quantity.note or "—"), "dim"


def _inputs_table(quantities, with_gradients: bool = True):
    from rich.text import Text

    columns = [("input", "left"), ("value", "right"), ("shape", "left"), ("requires_grad", "center"),
               ("is_leaf", "center"), ("grad_fn", "left")]
    table = _new_table(*(columns + ([("gradient", "right")] if with_gradients else [])))
    for q in quantities:
        cells = [Text(q.name, style="bold" if q.role == "input" else "dim"), Text(human_text(q.value)),
                 str(list(q.shape)), "yes" if q.requires_grad else "no", "yes" if q.is_leaf else "no", q.grad_fn or "—"]
        if with_gradients:
            text, style = _gradient(q) if q.role == "input" else ("constant", "dim")
            cells.append(Text(text, style=style))
        table.add_row(*cells)
    return table


def _variables_table(quantities, with_gradients: bool = True):
    from rich.text import Text

    columns = [("variable", "left"), ("value", "right"), ("shape", "left"), ("grad_fn", "left")]
    table = _new_table(*(columns + ([("gradient", "right")] if with_gradients else [])))
    for q in quantities:
        cells = [Text(q.name, style="bold"), Text(human_text(q.value)), str(list(q.shape)), q.grad_fn or "—"]
        if with_gradients:
            text, style = _gradient(q)
            cells.append(Text(text, style=style))
        table.add_row(*cells)
    return table


def grad(report, console) -> None:
    console.print(_heading(report.output, report.source))
    console.print()
    if report.inputs or report.constants:
        console.print(_inputs_table(report.inputs + report.constants))
    if report.variables:
        console.print()
        console.print(_variables_table(report.variables))
    if report.hessian is not None:
        console.print()
        _hessian(report, console)
    if report.check is not None:
        console.print()
        _check(report.check, console)
    if report.graph is not None:
        console.print()
        console.print(tree(report.graph, f"grad_fn graph of {report.output.name}"))


def _hessian(report, console) -> None:
    from rich.text import Text

    names = [q.name for q in report.inputs if q.requires_grad]
    output = report.output.name
    console.print(Text(f"Hessian: ∂²{output} / ∂row ∂column", style="dim"))
    table = _new_table(("", "left"), *((f"∂/∂{name}", "right") for name in names))
    for first in names:
        table.add_row(f"∂/∂{first}", *(human_text(report.hessian[(first, second)]) for second in names))
    console.print(table)


def _check(check, console) -> None:
    from rich.text import Text

    console.print(Text(f"finite differences (central, eps {check.eps:g}): ok when "
                       f"|error| <= {check.atol:g} + {check.rtol:g} * |numerical|", style="dim"))
    table = _new_table(("input", "left"), ("checked", "right"), ("max error", "right"), ("analytical", "right"),
                       ("numerical", "right"), ("", "left"))
    for e in check.entries:
        checked = f"{e.checked:,}" + (f" of {e.total:,}" if e.checked < e.total else "")
        table.add_row(Text(e.name, style="bold"), checked, f"{e.max_abs_error:.3g}", human_text(e.analytical),
                      human_text(e.numerical),
                      Text("ok", style="green") if e.passed else Text("FAILED", style="bold red"))
    console.print(table)
    if check.passed:
        console.print(Text(f"check passed: largest error {check.max_abs_error:.3g}", style="green"))
    else:
        failed = ", ".join(e.name for e in check.entries if not e.passed)
        console.print(Text(f"check FAILED for {failed}: largest error {check.max_abs_error:.3g}", style="bold red"))


def _node_label(node, reference: bool = False):
    from rich.text import Text

    text = Text(node.op, style="bold cyan" if node.op != "AccumulateGrad" else "bold green")
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
        from ...autograd.explain import values_text  # one line: the numbers (the first few of a large tensor)

        text.append(f"  grad {values_text(node.grad)}", style="magenta")
    if reference:
        text.append("  ↑ shown above", style="dim italic")
    return text


def tree(model, title: str):
    """The graph as a Rich tree, built without recursion; shared nodes are expanded once."""
    from rich.text import Text
    from rich.tree import Tree

    root = Tree(Text(title, style="bold"))
    if not model.nodes:
        root.add(Text("(no graph: the output does not depend on anything that requires grad)", style="dim"))
        return root
    nodes = {node.id: node for node in model.nodes}
    children: dict = {}
    for parent, child, _ in model.edges:
        children.setdefault(parent, []).append(child)
    placed = {model.root: root.add(_node_label(nodes[model.root]))}
    stack = [(model.root, 0)]
    while stack:
        node_id, depth = stack.pop()
        branch = placed[node_id]
        kids = children.get(node_id, [])
        if kids and depth >= MAX_TREE_DEPTH:
            branch.add(Text(f"… {len(kids)} more below (deeper than {MAX_TREE_DEPTH} levels)", style="dim"))
            continue
        expand = []
        for child in kids:
            if child in placed:
                branch.add(_node_label(nodes[child], reference=True))
            else:
                placed[child] = branch.add(_node_label(nodes[child]))
                expand.append(child)
        stack.extend((child, depth + 1) for child in reversed(expand))
    if model.left_out:
        root.add(Text(f"… {model.left_out:,} more nodes not shown", style="dim"))
    return root


def evaluation(report, console) -> None:
    console.print(_heading(report.output, report.source, ", forward only"))
    if report.inputs or report.constants:
        console.print()
        console.print(_inputs_table(report.inputs + report.constants, with_gradients=False))
    if report.variables:
        console.print()
        console.print(_variables_table(report.variables, with_gradients=False))


def graph(report, console) -> None:
    console.print(tree(report.graph, f"grad_fn graph of {report.output.name} ({report.source})"))
