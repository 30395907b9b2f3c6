"""Small expression suites written into temporary directories."""

from __future__ import annotations

import pytest

TUTORIAL = "u = a * b\nt = log(d)\ne = u + t * c\n"
WITH_DEFAULTS = "x: input = 2.0\ny: input = 3.0\nz = x * y + sin(x)\n"
NONSCALAR = "# expect-error: RuntimeError: grad can be implicitly created only for scalar outputs\nx: input = [1, 2, 3]\ny = x * x\n"


@pytest.fixture
def suite(tmp_path):
    """A directory of expression files; write(name, text) adds one."""

    class Suite:
        root = tmp_path

        def write(self, name: str, text: str):
            path = tmp_path / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
            return path

    return Suite()



@pytest.fixture(autouse=True)
def _no_ci_variables(monkeypatch):
    """CI runs this suite with CI=true (.ci/run): tests that want CI or shard variables set them."""
    from console import CI_VARIABLES

    for name in CI_VARIABLES:
        monkeypatch.delenv(name, raising=False)
