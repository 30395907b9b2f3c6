"""Reading the page back from the browser: what it shows, as the numbers it shows.

Every number the page writes is a `span.num` whose text is the number as explain's text writes it
(10 significant digits) and whose `data-value` is the number exactly as the embedded data holds
it; a value that is a tensor is a `.tensor` of them, with its shape in `data-shape` (shown whole
here, after its "Show all" button where it has one). `data-role` says what a value is.
"""

from __future__ import annotations

import math

import numpy as np

from autodiff.chain_rule import number_text

# One round trip reads a whole part of the page.
READ = r"""
function read(e) {
  if (!e) return null;
  if (e.classList.contains('tensor')) {
    if (e.dataset.whole === 'false') e.querySelector('button.whole').click();
    var cells = Array.from(e.querySelectorAll('.num'));
    return {shape: JSON.parse(e.dataset.shape), values: cells.map(function (c) { return c.dataset.value; }),
            texts: cells.map(function (c) { return c.textContent; })};
  }
  return {shape: null, values: [e.dataset.value], texts: [e.textContent]};
}
function role(root, name) { return root ? read(root.querySelector('[data-role="' + name + '"]')) : null; }
function roles(root, name) {
  return Array.from(root.querySelectorAll('[data-role="' + name + '"]')).map(read);
}
function text(root, selector) { var e = root.querySelector(selector); return e ? e.textContent : null; }
function lit(kind, cls) {
  return Array.from(document.querySelectorAll('svg ' + kind + '.' + cls)).map(function (e) {
    return kind === 'g.node' ? e.id : [e.dataset.to, e.dataset.from, e.dataset.position];
  });
}
"""

PATHS = READ + r"""
var box = document.getElementById('paths'), sum = document.getElementById('sum');
return {
  grad: role(box.querySelector('.grad-line'), 'grad'),
  count: text(box, '.count-line'), count_value: box.querySelector('.count-line') ?
      box.querySelector('.count-line').dataset.count : null,
  why: text(box, '.why'),
  paths: Array.from(box.querySelectorAll('li.path')).map(function (li) {
    var head = li.querySelector('.heads');
    return {head: head.textContent, locals: roles(head, 'local'), product: role(head, 'product'),
            edges: Array.from(li.querySelectorAll('li.edge-step')).map(function (e) { return e.textContent; }),
            edge_locals: Array.from(li.querySelectorAll('li.edge-step')).map(function (e) { return role(e, 'edge-local'); })};
  }),
  terms: sum ? roles(sum, 'term') : [], rest: role(sum, 'rest'), total: role(sum, 'total'),
  sum_text: sum ? sum.textContent : null,
  nodes: lit('g.node', 'lit'), edges: lit('path.edge', 'lit'),
  notes: Array.from(document.querySelectorAll('svg g.edge-note')).map(function (g) {
    return [g.dataset.edge, g.querySelector('text').textContent];
  }),
  note: text(box, '.labels-note')
};
"""

STEP = READ + r"""
var box = document.getElementById('step');
return {
  number: box.dataset.step, count: document.getElementById('step-count').textContent,
  node: text(box, '.step-node'), leaf: text(box, '.step-leaf'), op: text(box, '.step-op'), head: text(box, '.step-head'),
  grad: role(box, 'step-grad'), total: role(box, 'step-total'), arrivals: text(box, '.arrivals'),
  passes: Array.from(box.querySelectorAll('li.pass')).map(function (li) {
    return {to: text(li, '.pass-to'), grad: role(li, 'pass-grad'), local: role(li, 'pass-local'),
            value: role(li, 'pass-value'), formula: text(li, '.pass-formula'), text: li.textContent};
  }),
  current: lit('g.node', 'current'), passing: lit('path.edge', 'passing'),
  previous: document.getElementById('previous').disabled, next: document.getElementById('next').disabled,
  announced: document.getElementById('announce').textContent,
  line: Array.from(document.querySelectorAll('#program .line.here')).map(function (l) { return l.dataset.line; })
};
"""

# Every step in turn, read after each press of the Next button (one round trip for them all).
ALL_STEPS = r"""
document.getElementById('first').click();
var out = [];
for (var k = 0; ; k++) {
  out.push((function () {""" + STEP + r"""})());
  if (document.getElementById('next').disabled) break;
  document.getElementById('next').click();
}
return out;
"""


def parse(text: str):
    return None if text == "null" else float(text)


def value(read):
    """What the page showed, as numbers: a float, or a nested list in the shown shape."""
    if read is None:
        return None
    numbers = [parse(v) for v in read["values"]]
    if read["shape"] is None:
        return numbers[0]
    return np.array(numbers, dtype=float).reshape(read["shape"]).tolist()


def from_json(x):
    """A JSON value (numbers, nested lists, the words nan/inf/-inf) as floats."""
    if x is None:
        return None
    if isinstance(x, list):
        return [from_json(v) for v in x]
    return float(x)


def same(shown, expected) -> bool:
    """Exactly equal, nan where nan, shape for shape."""
    expected = from_json(expected)
    if shown is None or expected is None:
        return shown is None and expected is None
    a, b = np.asarray(shown, dtype=float), np.asarray(expected, dtype=float)
    return a.shape == b.shape and bool(np.all((a == b) | (np.isnan(a) & np.isnan(b))))


def texts_agree(read) -> bool:
    """Each number's text is its value written as explain writes it (10 significant digits)."""
    if read is None:
        return True
    for text, raw in zip(read["texts"], read["values"]):
        if raw == "null":
            if text != "None":
                return False
            continue
        exact = float(raw)
        if text == number_text(exact):
            continue
        # JavaScript breaks a tie at the tenth digit upwards where Python rounds half to even
        shown = float(text)
        if not (math.isfinite(exact) and math.isclose(shown, exact, rel_tol=1e-9, abs_tol=0)):
            return False
    return True
