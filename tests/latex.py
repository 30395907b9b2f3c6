"""LaTeX the tool writes, checked: braces that balance (escaped ones aside), and a document that
pdflatex compiles where it is installed (`apt-get install texlive-latex-base`)."""

from __future__ import annotations

import re
import shutil
import subprocess


def balanced(latex: str) -> bool:
    bare = re.sub(r"\\[{}]", "", latex)
    return bare.count("{") == bare.count("}")


def assert_compiles(folder, body: str, name: str = "doc") -> None:
    """`body` in an article (amsmath, amssymb) compiles with pdflatex, run in `folder`; nothing to
    check where pdflatex is missing."""
    if shutil.which("pdflatex") is None:
        return
    (folder / f"{name}.tex").write_text("\\documentclass{article}\\usepackage{amsmath,amssymb}\\begin{document}\n"
                                        + body + "\\end{document}\n")
    done = subprocess.run(["pdflatex", "-interaction=nonstopmode", "-halt-on-error", f"{name}.tex"], cwd=folder,
                          capture_output=True, timeout=300)
    assert done.returncode == 0, done.stdout.decode(errors="replace")[-3000:]
