"""The text of a derived Python module without the helpers it copies from the engine (their
own constants, such as a Padé table's indices, are no sizes of the program)."""

import ast


def without_helpers(module_text: str) -> str:
    module = ast.parse(module_text)
    module.body = [node for node in module.body if not (isinstance(node, (ast.FunctionDef, ast.Assign)) and
                                                        _helper_name(node))]
    return ast.unparse(module)


def _helper_name(node) -> bool:
    name = node.name if isinstance(node, ast.FunctionDef) else getattr(node.targets[0], "id", "")
    return name.startswith("_") and name not in ("_check_point", "_as") and not name.startswith("_C")
