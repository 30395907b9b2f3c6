"""Hostile input through the real command line: one message on standard error, the spec's exit
status, nothing on standard output, never a traceback (run_autodiff checks the last two)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from console import ROOT, console_script, environment, interrupted

TUTORIAL = ["examples/tutorial.expr", "--at", "a=2,b=3,c=5,d=10"]


def fails(result, code: int, stderr: str):
    assert (result.code, result.stdout, result.stderr) == (code, "", stderr)


# -- the program text (exit 3) ----------------------------------------------------------------------------

PROGRAMS = [
    ("", 3, "<expr>: error: the program is empty: write an expression, as `e = a * b + log(d) * c`\n"),
    ("# only a comment\n", 3,
     "<expr>: error: the program is empty: write an expression, as `e = a * b + log(d) * c`\n"),
    ("1+", 3, "<expr>:1:2: error: expected an expression after '+'\n    1+\n     ^\n"),
    ("(1+2", 3, "<expr>:1:1: error: unclosed '('\n    (1+2\n    ^\n"),
    ("1 $ 2", 3, "<expr>:1:3: error: unexpected character '$'\n    1 $ 2\n      ^\n"),
    ("a \u2212 b", 3,
     "<expr>:1:3: error: unexpected character '\u2212' (U+2212 MINUS SIGN); did you mean '-'?\n    a \u2212 b\n      ^\n"),
    ("__import__('os').system('id')", 3,
     "<expr>:1:12: error: strings are not supported: expressions use numbers, names and [lists]\n"
     "    __import__('os').system('id')\n               ^\n"),
    ("lg(x)", 3, "<expr>:1:1: error: unknown function 'lg'; did you mean 'log'?\n    lg(x)\n    ^~\n"),
    ("zeros(100000, 100000)", 4,
     "<expr>:1:1: error: zeros(100000, 100000) would create 10,000,000,000 elements; the limit is 50,000,000 "
     "(--max-elements)\n    zeros(100000, 100000)\n    ^~~~~~~~~~~~~~~~~~~~~\n"),
    ("sum(ones(2,3) + ones(4))", 4,
     "<expr>:1:15: error: '+' of shapes [2, 3] and [4]: The size of tensor a (3) must match the size of tensor b (4) "
     "at non-singleton dimension 1\n    sum(ones(2,3) + ones(4))\n                  ^\n"),
    # As PyTorch: // is recorded without a derivative, and backward through it says so (never a silent 0).
    ("x // 2", 4, "autodiff: error: derivative for aten::floor_divide is not implemented\n"),
    ("max(x, 0)", 3,
     "<expr>:1:1: error: max(input, 0) is ambiguous: write maximum(input, 0) for the larger of the two, or "
     "max(input, dim=0) to reduce along dimension 0: max(input, dim=None, keepdim=False)\n    max(x, 0)\n    ^~~~~~~~~\n"),
    # The method reduces, as in PyTorch, to a (values, indices) pair: the pair itself is no output.
    ("x.max(0)", 4, "autodiff: error: the output is the (values, indices) pair of max(), not a tensor: "
     "take its .values\n"),
]


@pytest.mark.parametrize("program, code, stderr", PROGRAMS, ids=[p[0][:20] or "empty" for p in PROGRAMS])
def test_invalid_programs(autodiff, program, code, stderr):
    fails(autodiff("grad", "-e", program, "--at", "x=1"), code, stderr)


def test_an_error_in_a_file_names_the_file_line_and_column(autodiff, tmp_path):
    path = tmp_path / "bad.expr"
    path.write_text("u = a * b\nt = log(d\ne = u + t\n")
    fails(autodiff("grad", str(path), "--at", "a=1,b=2,d=3"), 3, f"{path}:2:8: error: unclosed '('\n    t = log(d\n           ^\n")


def test_the_same_error_from_standard_input(autodiff):
    fails(autodiff("grad", "-", stdin="x = 1 +\n"), 3, "<stdin>:1:7: error: expected an expression after '+'\n"
                                                       "    x = 1 +\n          ^\n")


def test_huge_numbers_and_literals(autodiff, tmp_path):
    result = autodiff("eval", "-e", "9**9**9**9")
    assert (result.code, result.stdout) == (0, "output\tinf\n")
    assert result.stderr == "<expr>:1:4: warning: 9**9**9 produced inf\n    9**9**9**9\n       ^~~~~~~\n"
    path = tmp_path / "digits.expr"
    path.write_text("x = " + "9" * 5000 + "\n")
    result = autodiff("grad", str(path))
    assert result.code == 3
    assert result.stderr.startswith(f"{path}:1:5: error: number literal is too long: 5000 characters (at most 100)\n")
    assert len(result.stderr) < 400  # the line is shown as a window, not in full


def test_deep_nesting_is_a_limit_not_a_crash(autodiff, tmp_path):
    path = tmp_path / "nested.expr"
    path.write_text("(" * 100_000 + "a" + ")" * 100_000 + "\n")
    result = autodiff("grad", str(path), "--at", "a=1")
    assert result.code == 3
    assert result.stderr.startswith(f"{path}:1:201: error: too many nested brackets: more than 200 levels\n")


def test_nan_from_log_of_a_negative_number_is_a_warning_not_an_error(autodiff):
    result = autodiff("grad", "-e", "y = log(x)", "--at", "x=-1")
    assert (result.code, result.stdout) == (0, "y\tnan\nx\t-1.0\n")
    assert result.stderr == "<expr>:1:5: warning: log(x) produced nan\n    y = log(x)\n        ^~~~~~\n"


# -- the files (exit 2) -----------------------------------------------------------------------------------


def test_missing_file(autodiff):
    fails(autodiff("grad", "nope.expr"), 2, "autodiff: error: nope.expr: no such file\n")


def test_a_directory(autodiff):
    fails(autodiff("grad", "examples"), 2, "autodiff: error: examples: is a directory, not a program file\n")


@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="no /dev/zero")
def test_dev_zero_is_refused_after_reading_at_most_the_limit(autodiff):
    fails(autodiff("grad", "/dev/zero", timeout=60), 2,
          "autodiff: error: /dev/zero: larger than 8 MB, the largest program autodiff reads\n")


def test_a_10_megabyte_file(autodiff, tmp_path):
    path = tmp_path / "big.expr"
    path.write_text("x = 1\n" * (10 * 1024 * 1024 // 6 + 1))
    fails(autodiff("grad", str(path)), 2, f"autodiff: error: {path}: larger than 8 MB, the largest program autodiff reads\n")


def test_invalid_utf8(autodiff, tmp_path):
    path = tmp_path / "latin1.expr"
    path.write_bytes(b"a = 1\nb = \xff\xfe\n")
    fails(autodiff("grad", str(path)), 2,
          f"autodiff: error: {path}:2:5: not UTF-8 text (byte 0xff); save the file as UTF-8\n")


def test_a_file_and_an_expression_or_neither(autodiff):
    fails(autodiff("grad", "examples/tutorial.expr", "-e", "x"), 2,
          "autodiff: error: give either a FILE or -e EXPR, not both\n")
    fails(autodiff("grad"), 2, "autodiff: error: give a FILE, - to read standard input, or -e EXPR\n")


# -- --at values and other options (exit 2) ---------------------------------------------------------------

AT_VALUES = [
    ("a=", "autodiff: error: --at a=: the value after '=' is missing\n"),
    ("=2", "autodiff: error: --at =2: a name is missing before '='\n"),
    ("abc", "autodiff: error: --at abc: expected NAME=VALUE\n"),
    ("a=2,a=3", "autodiff: error: --at gives 'a' twice\n"),
    ("a=abc", "autodiff: error: --at a: a value cannot use names, only numbers and [lists]\n    abc\n    ^~~\n"),
    ("a=[1,2", "autodiff: error: --at a: unclosed '['\n    [1,2\n    ^\n"),
    ("a=[1,[2]]", "autodiff: error: --at a: this list is not rectangular: a number and a sequence side by side "
                  "at dim 1\n    [1,[2]]\n    ^~~~~~~\n"),
    ("1a=2", "autodiff: error: --at 1a=2: '1a' is not a name\n"),
]


@pytest.mark.parametrize("value, stderr", AT_VALUES, ids=[v for v, _ in AT_VALUES])
def test_bad_at_values(autodiff, value, stderr):
    fails(autodiff("grad", "-e", "a * 2", "--at", value), 2, stderr)


def test_a_missing_input_value(autodiff):
    fails(autodiff("grad", "-e", "x * y", "--at", "x=1"), 2,
          "<expr>:1:5: error: no value for input 'y': give one with --at y=VALUE\n    x * y\n        ^\n")


OPTIONS = [
    (["--bogus"], "autodiff: error: No such option: --bogus (Possible options: --out) (see autodiff grad --help)\n"),
    (["--format", "xml"], "autodiff: error: Invalid value for '--format' / '-f': 'xml' is not one of 'auto', 'rich', "
                          "'plain', 'json' (see autodiff grad --help)\n"),
    (["--at"], "autodiff: error: Option '--at' requires an argument (see autodiff grad --help)\n"),
    (["--order", "3"], "autodiff: error: --order takes 1 or 2, not 3\n"),
    (["--retain", "zz"], "autodiff: error: --retain names 'zz', which the program does not assign\n"),
    (["--wrt", "zz"], "autodiff: error: --wrt names 'zz', which is not an input of the program\n"),
    (["--wrt", "t"], "autodiff: error: --wrt names 't', which is not an input of the program: line 4 assigns it, "
                     "a value the program computes; to differentiate with respect to it, declare it an input: "
                     "`t: input = log(d)`\n"),
    (["--wrt", ","], "autodiff: error: --wrt needs at least one name\n"),
    (["--output", "uu"], "autodiff: error: --output uu: the program has no variable 'uu'; did you mean 'u'?\n"),
    (["--seed", "-1"], "autodiff: error: Invalid value for '--seed': -1 is not in the range x>=0 "
                       "(see autodiff grad --help)\n"),
    (["--rtol", "-1"], "autodiff: error: Invalid value for '--rtol': -1.0 is not in the range x>=0.0 "
                       "(see autodiff grad --help)\n"),
    (["--grad-output", "abc"], "autodiff: error: --grad-output: a value cannot use names, only numbers and [lists]\n"
                               "    abc\n    ^~~\n"),
]


@pytest.mark.parametrize("options, stderr", OPTIONS, ids=[" ".join(o) for o, _ in OPTIONS])
def test_bad_options(autodiff, options, stderr):
    fails(autodiff("grad", *TUTORIAL, *options), 2, stderr)


def test_unknown_command(autodiff):
    fails(autodiff("frob"), 2, "autodiff: error: No such command 'frob' (see autodiff --help)\n")


def test_cuda_without_cupy_says_how_to_install_it(autodiff):
    pytest.importorskip("numpy")
    try:
        import cupy  # noqa: F401

        pytest.skip("CuPy is installed here")
    except ImportError:
        pass
    fails(autodiff("grad", *TUTORIAL, "--device", "cuda"), 2,
          "autodiff: error: CUDA device requested but CuPy is not installed "
          "(install it with: pip install 'autodiff[cuda]')\n")


# -- the process: pipes and signals -----------------------------------------------------------------------


def test_a_reader_that_goes_away_ends_the_run_quietly(tmp_path):
    # 2 million numbers of JSON, of which `head -c1` reads one byte
    process = subprocess.Popen(console_script() + ["eval", "-e", "arange(2000000)", "-f", "json"], cwd=ROOT,
                               env=environment(), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert process.stdout.read(1) == b"{"
    process.stdout.close()
    stderr = process.stderr.read().decode()
    assert process.wait(timeout=60) == 141
    assert stderr == ""


def test_piping_into_head_in_a_shell():
    command = f"{' '.join(console_script())} eval -e 'arange(2000000)' -f json | head -c1"
    done = subprocess.run(["bash", "-c", command + "; echo \" ${PIPESTATUS[0]}\""], cwd=ROOT, env=environment(),
                          capture_output=True, text=True, timeout=60)
    assert (done.stdout, done.stderr) == ("{ 141\n", "")


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
def test_ctrl_c_ends_with_one_line_and_status_130(tmp_path):
    path = tmp_path / "slow.expr"
    path.write_text("s = x\nfor i in range(100000000):\n    s = s * 1.0\ns\n")
    code, stdout, stderr, _ = interrupted(["grad", str(path), "--at", "x=1", "--max-iterations", "1000000000"],
                                          after=1.5)  # well into the loop
    assert (code, stdout, stderr) == (130, b"", b"autodiff: interrupted\n")
