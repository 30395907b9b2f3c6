"""The rule that compares printed transcripts with recorded ones (tests/printed.py): the last
digits a CPU's BLAS gives may differ, nothing else may."""

from printed import first_difference, matches_with_gaps


def test_a_blas_digit_difference_matches():
    # The recorded mlp gradient on one CPU, and what an AMD EPYC printed for it.
    recorded = 'W2\t[[0.0193], [-0.29527762236291805], [-0.22979343953968578]]'
    printed = 'W2\t[[0.0193], [-0.295277622362918], [-0.22979343953968578]]'
    assert first_difference(printed, recorded) is None


def test_a_rounding_boundary_in_a_ten_digit_table_matches_though_columns_shift():
    recorded = "a      1.000000000   []\n───────────────────"
    printed = "a     0.9999999999   []\n──────────────────"
    assert first_difference(printed, recorded) is None


def test_a_changed_value_does_not_match():
    assert first_difference("x\t0.29527762", "x\t0.29527763") is not None  # the 8th digit is real
    assert first_difference("x\t3.0", "x\t-3.0") is not None
    assert first_difference("x\t1e-3", "x\t1e-4") is not None


def test_changed_words_or_lines_do_not_match():
    assert first_difference("x\t1.0", "y\t1.0") is not None
    assert first_difference("x\t1.0 ok", "x\t1.0 failed") is not None
    assert first_difference("x\t1.0\n", "x\t1.0\ny\t2.0\n") is not None
    assert first_difference("shape [2, 3]", "shape [2, 3, 1]") is not None


def test_names_with_digits_are_words_not_numbers():
    assert first_difference("W1\t2.0", "W2\t2.0") is not None
    assert first_difference("<Node at 0x7f01>", "<Node at 0x7f01>") is None


def test_nan_matches_only_nan():
    assert first_difference("nan", "nan") is None
    assert first_difference("nan", "1.0") is not None


def test_gaps_stand_for_any_lines():
    printed = "head\none\ntwo 2.0000000001\ntail\n"
    assert matches_with_gaps(["head", "...", "two 2.0", "...", "tail"], printed)
    assert matches_with_gaps(["head", "...", "tail"], printed)
    assert matches_with_gaps(["...", "tail"], printed)
    assert not matches_with_gaps(["head", "...", "three", "...", "tail"], printed)
    assert not matches_with_gaps(["head", "tail"], printed)
    assert not matches_with_gaps(["one", "...", "tail"], printed)
