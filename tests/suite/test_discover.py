"""Which files a run covers, and shards that split them."""

from __future__ import annotations

import os
from pathlib import Path, PurePosixPath

import pytest
from hypothesis import given
from hypothesis import strategies as st

from autodiff.testing.discover import SuiteProblem, discover, parse_shard, pending_records, shard, unused_records
from autodiff.testing.files import path_text


def names(files, root):
    return [Path(p).relative_to(root).as_posix() for p in files]  # discover gives path texts


def test_directories_are_searched_below_with_the_default_globs(suite):
    for name in ("a.expr", "b.txt", "deep/er/c.expr", "d.py", "a.expr.golden.json", "a.expr.golden.new",
                 ".hidden/e.expr", "__pycache__/f.expr", "deep/notes.md", "build/g.expr", "venv/h.expr"):
        suite.write(name, "x = 1\n")
    assert names(discover([suite.root]), suite.root) == ["a.expr", "deep/er/c.expr"]  # *.expr only


def test_globs_replace_the_defaults(suite):
    for name in ("a.expr", "b.txt", "c.formula"):
        suite.write(name, "x = 1\n")
    assert names(discover([suite.root], ("*.formula",)), suite.root) == ["c.formula"]
    assert names(discover([suite.root], ("*.formula", "*.txt")), suite.root) == ["b.txt", "c.formula"]


def test_a_named_file_is_taken_whatever_its_name_and_each_file_once(suite):
    file = suite.write("odd.name", "x = 1\n")
    suite.write("a.expr", "x = 1\n")
    found = discover([file, suite.root, suite.root / "a.expr"])
    assert names(found, suite.root) == ["a.expr", "odd.name"]


def test_a_path_that_cannot_be_looked_at_says_why_not_that_it_is_missing(suite):
    too_long = suite.root / ("x" * 300 + ".expr")  # past a file name's 255 bytes
    with pytest.raises(SuiteProblem, match=r"cannot be looked at \(File name too long\)"):
        discover([too_long])
    with pytest.raises(SuiteProblem, match=r"cannot be looked at \(File name too long\)"):
        pending_records([too_long])


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() == 0, reason="root looks into every folder")
def test_a_record_whose_file_cannot_be_looked_at_is_not_called_unused(suite):
    suite.write("locked/gone.expr.golden.json", "{}")
    (suite.root / "locked").chmod(0o600)  # its names can be listed, but nothing in it looked at
    try:
        assert unused_records([suite.root], ("*.expr",), []) == []  # not "its file does not exist"
    finally:
        (suite.root / "locked").chmod(0o700)


def test_missing_paths_are_usage_errors(suite):
    with pytest.raises(SuiteProblem, match="nope: no such file or directory"):
        discover([suite.root / "nope"])


@given(st.integers(0, 60), st.integers(1, 9))
def test_shards_cover_every_file_exactly_once(count, slices):
    files = [f"f{i:03}.expr" for i in range(count)]
    parts = [shard(files, index, slices) for index in range(1, slices + 1)]
    assert sorted(f for part in parts for f in part) == files


def test_shards_are_deterministic_and_a_new_file_moves_no_other():
    files = [f"f{i}.expr" for i in range(40)]
    before = [shard(files, index, 3) for index in (1, 2, 3)]
    assert before == [shard(list(reversed(files)), index, 3)[::-1] for index in (1, 2, 3)]
    assert all(len(part) >= 5 for part in before)  # a hash spreads them
    after = [shard(files + ["new.expr"], index, 3) for index in (1, 2, 3)]
    assert [[f for f in part if f != "new.expr"] for part in after] == before


@pytest.mark.parametrize("text", ["0/3", "4/3", "1/0", "a/b", "3", "1/3/4", "", "auto/2"])
def test_bad_shards(text):
    with pytest.raises(SuiteProblem, match="--shard"):
        parse_shard(text)
    assert parse_shard("3/3") == (3, 3)


@given(st.lists(st.sampled_from(["a", "b.expr", ".", "..", "", "/", "//"]), max_size=8).map("".join))
def test_a_path_is_written_as_pathlib_writes_it(text):
    """The testing layer writes paths without importing pathlib, the same way."""
    assert path_text(text) == str(PurePosixPath(text))
