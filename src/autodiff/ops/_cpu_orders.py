"""The orders PyTorch's CPU kernels leave equal values in, copied step for step.

PyTorch's unstable sort and topk call libstdc++'s `std::sort`, `std::nth_element` and
`std::partial_sort`, and kthvalue ATen's own quickselect: which of equal values comes first
(and, for `topk(sorted=False)`, the order of all the values) is theirs alone. So that the
gradient of tied elements goes to the element PyTorch gives it to, ordering.py runs these copies
on the rows where it matters. Each works on `items`, a list of (value, index) pairs, in place,
by `before(a, b)` on the values, as the C++ templates do (GCC's bits/stl_algo.h and
bits/stl_heap.h: introsort with a threshold of 16, median-of-three pivots, heap fallbacks;
ATen's SortingUtils.h for quick_select_template). Loops, and no recursion deeper than
2 log2(n) (introsort's own limit). Checked against PyTorch on random ties and nan
(tests/engine/test_torch_agreement.py).
"""

from __future__ import annotations

_THRESHOLD = 16  # libstdc++'s _S_threshold


def _lg(n: int) -> int:
    return n.bit_length() - 1


def sort(items: list, before, first: int = 0, last: int | None = None) -> None:
    last = len(items) if last is None else last
    if last - first > 1:
        _introsort_loop(items, first, last, 2 * _lg(last - first), before)
        _final_insertion_sort(items, first, last, before)


def nth_element(items: list, nth: int, before) -> None:
    first, last = 0, len(items)
    if first == last or nth == last:
        return
    depth = 2 * _lg(last - first)
    while last - first > 3:
        if depth == 0:
            _heap_select(items, first, nth + 1, last, before)
            items[first], items[nth] = items[nth], items[first]
            return
        depth -= 1
        cut = _partition_pivot(items, first, last, before)
        if cut <= nth:
            first = cut
        else:
            last = cut
    _insertion_sort(items, first, last, before)


def partial_sort(items: list, middle: int, before) -> None:
    _heap_select(items, 0, middle, len(items), before)
    _sort_heap(items, 0, middle, before)


# -- introsort ----------------------------------------------------------------------------------------


def _introsort_loop(items, first, last, depth, before) -> None:
    while last - first > _THRESHOLD:
        if depth == 0:
            _heap_select(items, first, last, last, before)
            _sort_heap(items, first, last, before)
            return
        depth -= 1
        cut = _partition_pivot(items, first, last, before)
        _introsort_loop(items, cut, last, depth, before)  # depth-limited: at most 2 log2(n) deep
        last = cut


def _partition_pivot(items, first, last, before) -> int:
    middle = first + (last - first) // 2
    _median_to_first(items, first, first + 1, middle, last - 1, before)
    return _unguarded_partition(items, first + 1, last, first, before)


def _median_to_first(items, result, a, b, c, before) -> None:
    x, y, z = items[a][0], items[b][0], items[c][0]
    if before(x, y):
        pick = b if before(y, z) else c if before(x, z) else a
    else:
        pick = a if before(x, z) else c if before(y, z) else b
    items[result], items[pick] = items[pick], items[result]


def _unguarded_partition(items, first, last, pivot, before) -> int:
    value = items[pivot][0]
    while True:
        while before(items[first][0], value):
            first += 1
        last -= 1
        while before(value, items[last][0]):
            last -= 1
        if not first < last:
            return first
        items[first], items[last] = items[last], items[first]
        first += 1


def _final_insertion_sort(items, first, last, before) -> None:
    if last - first > _THRESHOLD:
        _insertion_sort(items, first, first + _THRESHOLD, before)
        for i in range(first + _THRESHOLD, last):
            _linear_insert(items, i, before)
    else:
        _insertion_sort(items, first, last, before)


def _insertion_sort(items, first, last, before) -> None:
    for i in range(first + 1, last):
        if before(items[i][0], items[first][0]):
            item = items[i]
            items[first + 1 : i + 1] = items[first:i]
            items[first] = item
        else:
            _linear_insert(items, i, before)


def _linear_insert(items, last, before) -> None:
    item = items[last]
    while before(item[0], items[last - 1][0]):
        items[last] = items[last - 1]
        last -= 1
    items[last] = item


# -- heaps ----------------------------------------------------------------------------------------------


def _heap_select(items, first, middle, last, before) -> None:
    _make_heap(items, first, middle, before)
    for i in range(middle, last):
        if before(items[i][0], items[first][0]):
            _pop_heap(items, first, middle, i, before)


def _make_heap(items, first, last, before) -> None:
    length = last - first
    if length < 2:
        return
    parent = (length - 2) // 2
    while True:
        _adjust_heap(items, first, parent, length, items[first + parent], before)
        if parent == 0:
            return
        parent -= 1


def _adjust_heap(items, first, hole, length, item, before) -> None:
    top = hole
    child = hole
    while child < (length - 1) // 2:
        child = 2 * (child + 1)
        if before(items[first + child][0], items[first + child - 1][0]):
            child -= 1
        items[first + hole] = items[first + child]
        hole = child
    if length % 2 == 0 and child == (length - 2) // 2:
        child = 2 * (child + 1)
        items[first + hole] = items[first + child - 1]
        hole = child - 1
    parent = (hole - 1) // 2  # push_heap
    while hole > top and before(items[first + parent][0], item[0]):
        items[first + hole] = items[first + parent]
        hole = parent
        parent = (hole - 1) // 2
    items[first + hole] = item


def _pop_heap(items, first, last, result, before) -> None:
    item = items[result]
    items[result] = items[first]
    _adjust_heap(items, first, 0, last - first, item, before)


def _sort_heap(items, first, last, before) -> None:
    while last - first > 1:
        last -= 1
        _pop_heap(items, first, last, last, before)


# -- ATen's quick_select_template (kthvalue) --------------------------------------------------------------


def quickselect(items: list, k: int, before) -> None:
    """Puts the k-th (from 0) item at k, as PyTorch's median-of-three quickselect does."""
    low, high = 0, len(items) - 1
    while high > low:
        if high == low + 1:
            if before(items[high][0], items[low][0]):
                items[low], items[high] = items[high], items[low]
            return
        middle = low + (high - low) // 2
        items[middle], items[low + 1] = items[low + 1], items[middle]
        for a, b in ((low + 1, high), (low, high), (low + 1, low)):  # the median of three at low
            if before(items[b][0], items[a][0]):
                items[a], items[b] = items[b], items[a]
        i, j, pivot = low + 1, high, items[low][0]
        while True:
            i += 1
            while before(items[i][0], pivot):
                i += 1
            j -= 1
            while before(pivot, items[j][0]):
                j -= 1
            if j < i:
                break
            items[i], items[j] = items[j], items[i]
        items[low], items[j] = items[j], items[low]
        if j <= k:
            low = i
        if j >= k:
            high = j - 1
