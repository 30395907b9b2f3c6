
"use strict";
(function () {
  // Everything shown comes from the embedded data: `explanation` is `autodiff explain --format
  // json`, `graph` the drawn nodes, `links` where each path and step runs in the drawing. This
  // script writes numbers out; it never works one out. Text from the program (names, formulas,
  // source) is only ever set as textContent.
  var data = JSON.parse(document.getElementById("autodiff-data").textContent);
  var ex = data.explanation, graph = data.graph, links = data.links, words = data.text;
  var SVGNS = "http://www.w3.org/2000/svg";
  var LABELS_AT_MOST = 40; // lit edges labelled all at once; more: the chosen path's only
  var NOTE_CHAR = 6.63; // the advance of a monospace character at the labels' 11px (0.602 em)
  var LABEL_ROOM = 48; // characters of a formula on an edge's label (the paths list has it whole)
  var EDGE_ITEMS = 3, THRESHOLD = 8; // an axis longer than 8 shows its first and last 3 (as NumPy prints)

  function $(id) { return document.getElementById(id); }
  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = text;
    return e;
  }
  function add(parent) {
    for (var i = 1; i < arguments.length; i++) {
      var child = arguments[i];
      parent.appendChild(typeof child === "string" ? document.createTextNode(child) : child);
    }
    return parent;
  }

  // -- numbers, as explain's text writes them: 10 significant digits, integers without a point --
  function fmt(x) {
    if (x === null || x === undefined) return "None";
    if (typeof x === "string") return x; // nan, inf, -inf
    if (typeof x === "boolean") return x ? "True" : "False";
    if (Number.isInteger(x) && Math.abs(x) < 1e15) return String(x === 0 ? 0 : x);
    var parts = x.toExponential(9).split("e"), exp = parseInt(parts[1], 10);
    if (exp < -4 || exp >= 10) {
      var mantissa = parts[0].indexOf(".") >= 0 ? parts[0].replace(/\.?0+$/, "") : parts[0];
      var digits = String(Math.abs(exp));
      return mantissa + "e" + (exp < 0 ? "-" : "+") + (digits.length < 2 ? "0" : "") + digits;
    }
    var fixed = x.toFixed(9 - exp);
    return fixed.indexOf(".") >= 0 ? fixed.replace(/\.?0+$/, "") : fixed;
  }
  function number(x, role) {
    // data-value: the number exactly as the data holds it; data-role: what it is (for readers and tests)
    var span = el("span", "num", fmt(x));
    span.dataset.value = x === null ? "null" : String(x);
    if (role) span.dataset.role = role;
    if (typeof x === "number" && span.textContent !== String(x)) span.title = String(x);
    return span;
  }
  function shapeOf(v) {
    var shape = [];
    while (Array.isArray(v)) { shape.push(v.length); v = v[0]; }
    return shape;
  }
  function kept(n, whole, full) {
    // the indices shown of an axis of n (null: the gap); `full`, where the data holds only the
    // corners of a summarised tensor, is the axis's whole length
    var out = [], i;
    if (full === undefined) full = n;
    if (whole || full <= THRESHOLD) { for (i = 0; i < n; i++) out.push(i); return out; }
    for (i = 0; i < EDGE_ITEMS; i++) out.push(i);
    out.push(null);
    for (i = n - EDGE_ITEMS; i < n; i++) out.push(i);
    return out;
  }
  function row(values, whole, full) {
    var tr = el("tr");
    kept(values.length, whole, full).forEach(function (i) {
      var td = el("td", i === null ? "gap" : "");
      add(td, i === null ? "…" : number(values[i]));
      tr.appendChild(td);
    });
    return tr;
  }
  function matrix(v, whole, full) {
    // full: the whole lengths of the (one or two) axes, where v holds a summary's corners
    var table = el("table");
    full = full || shapeOf(v);
    if (v.length && !Array.isArray(v[0])) { table.appendChild(row(v, whole, full[0])); return table; }
    var width = v.length ? kept(v[0].length, whole, full[1]).length : 0;
    kept(v.length, whole, full[0]).forEach(function (i) {
      if (i === null) {
        var tr = el("tr"), td = el("td", "gap", "⋮");
        td.colSpan = Math.max(width, 1);
        table.appendChild(add(tr, td));
      } else {
        table.appendChild(row(v[i], whole, full[1]));
      }
    });
    return table;
  }
  function slices(v, shape, prefix, whole, box, full) {
    // tensors of 3 dimensions or more: one matrix per index of the leading dimensions
    full = full || shape;
    if (shape.length <= 2) {
      if (prefix.length) box.appendChild(el("span", "index", "[" + prefix.concat([":", ":"]).join(", ") + "]"));
      box.appendChild(matrix(v, whole, full));
      return;
    }
    kept(v.length, whole, full[0]).forEach(function (i) {
      if (i === null) { box.appendChild(el("span", "index gap", "⋮")); return; }
      var index = i < v.length - EDGE_ITEMS || v.length === full[0] ? i : full[0] - v.length + i; // a corner's place
      slices(v[i], shape.slice(1), prefix.concat([index]), whole, box, full.slice(1));
    });
  }
  function summaryView(s, role) {
    // a tensor too large to embed whole: its corners, in its shape, and its statistics
    var box = el("span", "tensor summary");
    box.dataset.shape = JSON.stringify(s.shape);
    box.dataset.whole = "false";
    if (role) box.dataset.role = role;
    slices(s.corner, shapeOf(s.corner), [], false, box, s.shape);
    box.appendChild(el("span", "shape", "shape [" + s.shape.join(", ") + "]"));
    var stats = el("span", "stats");
    add(stats, "min ", number(s.min, "min"), " · max ", number(s.max, "max"), " · mean ", number(s.mean, "mean"));
    if (s.not_finite) add(stats, " (of the finite; " + s.not_finite.toLocaleString("en-US") + " nan or inf)");
    box.appendChild(stats);
    box.appendChild(el("span", "muted", s.size.toLocaleString("en-US") +
                       " numbers, summarised: autodiff explain --format json writes them all"));
    return box;
  }
  function cornerOf(v) { return v !== null && typeof v === "object" && v.summary ? v.corner : v; }
  function tensorView(v, role) {
    // a value in its shape: a number, or a table (one per index of the leading dimensions)
    if (v !== null && typeof v === "object" && v.summary) return summaryView(v, role);
    if (!Array.isArray(v)) return number(v, role);
    var shape = shapeOf(v), size = shape.reduce(function (a, b) { return a * b; }, 1);
    var box = el("span", "tensor");
    box.dataset.shape = JSON.stringify(shape);
    if (role) box.dataset.role = role;
    var cut = shape.some(function (n) { return n > THRESHOLD; });
    function draw(whole) {
      box.textContent = "";
      box.dataset.whole = whole || !cut ? "true" : "false";
      if (size === 0) box.appendChild(el("span", "gap", "[] (no elements)"));
      else slices(v, shape, [], whole, box);
      box.appendChild(el("span", "shape", "shape [" + shape.join(", ") + "]"));
      if (cut) {
        var button = el("button", "whole", whole ? "Show less" : "Show all " + size.toLocaleString("en-US") + " numbers");
        button.type = "button";
        button.setAttribute("aria-expanded", whole ? "true" : "false");
        button.addEventListener("click", function (event) {
          event.stopPropagation();
          draw(!whole);
          box.querySelector("button.whole").focus();
        });
        box.appendChild(button);
      }
    }
    draw(false);
    return box;
  }
  function short(v) {
    // a value in a line of text (an edge's label): a number, or a tensor's first numbers
    v = cornerOf(v);
    if (!Array.isArray(v)) return fmt(v);
    var flat = [];
    (function walk(x) { if (Array.isArray(x)) x.forEach(walk); else flat.push(x); })(v);
    return "[" + flat.slice(0, 4).map(fmt).join(", ") + (flat.length > 4 ? ", …" : "") + "]";
  }

  // -- the drawing --
  var picture = $("picture"), svg = picture.querySelector("svg");
  var nodeEls = {}, edgeEls = {};
  var nodes = {};
  graph.nodes.forEach(function (n) { nodes[n.id] = n; });
  function edgeKey(e) { return e[0] + ">" + e[1] + ">" + e[2]; }
  function nodeTitle(n) {
    if (n.leaf) return n.name || "leaf";
    if (n.name) return n.source ? n.name + " = " + n.source : n.name;
    return n.source || n.op;
  }
  if (svg) {
    svg.setAttribute("role", "group");
    svg.setAttribute("aria-label", "The graph: " + graph.nodes.length + " nodes, the output at the top");
    Array.prototype.forEach.call(svg.querySelectorAll("g.node"), function (g) {
      var id = parseInt(g.id.slice(1), 10), n = nodes[id];
      nodeEls[id] = g;
      g.setAttribute("tabindex", "0");
      g.setAttribute("role", "button");
      var texts = Array.prototype.map.call(g.querySelectorAll("text"), function (t) { return t.textContent; });
      g.setAttribute("aria-label", (n && n.leaf ? "leaf, input " : "node ") + texts.join(", "));
    });
    Array.prototype.forEach.call(svg.querySelectorAll("path.edge"), function (p) {
      var key = p.dataset.to.slice(1) + ">" + p.dataset.from.slice(1) + ">" + p.dataset.position;
      edgeEls[key] = p;
    });
    var notes = document.createElementNS(SVGNS, "g");
    notes.setAttribute("class", "edge-notes");
    svg.appendChild(notes);
  }
  if (!svg) picture.appendChild(el("p", "muted", "Nothing was recorded: the output does not depend on an input " +
                                   "that requires grad."));
  if (graph.left_out) $("left-out").textContent = "… " + graph.left_out.toLocaleString("en-US") + " more nodes not drawn";

  var natural = svg ? { w: parseFloat(svg.getAttribute("width")), h: parseFloat(svg.getAttribute("height")) } : null;
  var scale = 1;
  function zoom(to) {
    if (!svg) return;
    scale = Math.min(Math.max(to, 0.1), 4);
    svg.style.width = natural.w * scale + "px";
    svg.style.height = natural.h * scale + "px";
  }
  function fit() {
    if (!svg) return;
    var room = picture.clientWidth - 2;
    zoom(room > 0 && natural.w > room ? room / natural.w : 1);
  }
  $("zoom-in").addEventListener("click", function () { zoom(scale * 1.25); });
  $("zoom-out").addEventListener("click", function () { zoom(scale / 1.25); });
  $("zoom-fit").addEventListener("click", fit);

  function clearClass(name) {
    if (!svg) return;
    Array.prototype.forEach.call(svg.querySelectorAll("." + name), function (e) { e.classList.remove(name); });
  }
  function mark(id, name) { if (id !== null && nodeEls[id]) nodeEls[id].classList.add(name); }
  function markEdge(e, name) { if (e && edgeEls[edgeKey(e)]) edgeEls[edgeKey(e)].classList.add(name); }
  function reveal(id) {
    var g = id === null ? null : nodeEls[id];
    if (!g) return;
    var box = g.getBoundingClientRect(), view = picture.getBoundingClientRect();
    if (box.left < view.left || box.right > view.right || box.top < view.top || box.bottom > view.bottom) {
      g.scrollIntoView({ block: "nearest", inline: "nearest" });
    }
  }
  function midpoint(path) {
    // the middle of an edge: of its middle step (each step a line, or an S-curve whose middle is halfway)
    var numbers = path.getAttribute("d").match(/-?[0-9.]+/g).map(Number), ends = [], i;
    var command = path.getAttribute("d").match(/[MLC]/g), at = 0;
    for (i = 0; i < command.length; i++) {
      at += command[i] === "C" ? 6 : 2;
      ends.push([numbers[at - 2], numbers[at - 1]]);
    }
    var k = Math.max(0, Math.floor((ends.length - 1) / 2)), a = ends[k], b = ends[Math.min(k + 1, ends.length - 1)];
    return { x: (a[0] + b[0]) / 2, y: (a[1] + b[1]) / 2 };
  }
  function label(edges) {
    // each edge's local derivative on it, at the middle of the edge: [edge, text, whole text]. The
    // drawing's font is monospace, so a label's width is its length in characters: nothing to measure.
    if (!svg) return;
    notes.textContent = "";
    var fragment = document.createDocumentFragment();
    edges.forEach(function (item) {
      var path = edgeEls[edgeKey(item[0])];
      if (!path) return;
      var middle = midpoint(path);
      var g = document.createElementNS(SVGNS, "g"), rect = document.createElementNS(SVGNS, "rect");
      var text = document.createElementNS(SVGNS, "text"), width = Array.from(item[1]).length * NOTE_CHAR;
      g.setAttribute("class", "edge-note");
      g.dataset.edge = edgeKey(item[0]);
      text.textContent = item[1];
      text.setAttribute("x", middle.x + 6);
      text.setAttribute("y", middle.y + 4);
      rect.setAttribute("x", middle.x + 3);
      rect.setAttribute("y", middle.y - 7);
      rect.setAttribute("width", width + 6);
      rect.setAttribute("height", 15);
      rect.setAttribute("rx", "3");
      g.appendChild(rect);
      g.appendChild(text);
      if (item[2] !== item[1]) { // cut short: the whole text shows on hover
        var title = document.createElementNS(SVGNS, "title");
        title.textContent = item[2];
        g.appendChild(title);
      }
      fragment.appendChild(g);
    });
    notes.appendChild(fragment);
  }

  function announce(text) { $("announce").textContent = text; }

  // -- the program's text, line by line --
  var lines = [];
  data.program.replace(/\r?\n$/, "").split("\n").forEach(function (text, i) {
    var line = el("span", "line");
    line.dataset.line = String(i + 1);
    add(line, el("span", "number", String(i + 1)), text.replace(/\r$/, ""));
    lines.push(line);
    $("program").appendChild(line);
  });
  function hereLine(line) {
    lines.forEach(function (l) { l.classList.remove("here"); });
    if (line && lines[line - 1]) lines[line - 1].classList.add("here");
  }

  // -- the header --
  $("title").textContent = "The chain rule of " + data.source;
  add($("output"), el("span", "formula", ex.output + " = "), tensorView(ex.value, "value"));
  if (words.seed) { $("seed").hidden = false; $("seed").textContent = words.seed[0].toUpperCase() + words.seed.slice(1) + "."; }
  if (data.warnings.length) {
    $("warnings").hidden = false;
    data.warnings.forEach(function (w) { $("warnings").appendChild(el("li", null, "warning: " + w)); });
  }

  // -- paths to an input --
  var inputNames = Object.keys(ex.inputs), chosenInput = null, chosenPath = 0;
  var inputButtons = {};
  inputNames.forEach(function (name) {
    var button = el("button", "input", words.labels[name]);
    button.type = "button";
    button.dataset.input = name;
    button.setAttribute("aria-pressed", "false");
    button.addEventListener("click", function () { showInput(name); });
    inputButtons[name] = button;
    $("inputs").appendChild(button);
  });
  if (!inputNames.length) $("paths").appendChild(el("p", "muted", "No input requires grad: there are no paths to show."));

  function heads(path) {
    var parts = path.edges.map(function (e) { return e.formula.split(" = ")[0].split(":")[0]; });
    return parts.length ? parts.join(" · ") : "∂" + path.nodes[0] + "/∂" + path.nodes[0];
  }
  function showsLocal(e) {
    return e.local !== null && e.formula.slice(-(" = " + short(e.local)).length) !== " = " + short(e.local);
  }
  function edgeText(e, room) {
    var formula = room && e.formula.length > room ? e.formula.slice(0, room - 1) + "…" : e.formula;
    return formula + (showsLocal(e) ? " = " + short(e.local) : "");
  }

  // -- the formula, rule by rule (derive --steps), each step's value at the point --
  function showFormula(name) {
    var box = $("formula"), formula = data.formula;
    box.textContent = "";
    if (!formula || formula.refused) {
      box.appendChild(el("p", "muted", formula ? "No steps here: " + formula.refused : "No steps here."));
      return;
    }
    var steps = formula.inputs[name];
    if (!steps) { box.appendChild(el("p", "muted", "No steps for " + name + ".")); return; }
    var list = el("ol", "formula-steps");
    steps.forEach(function (s) {
      var li = add(el("li", "formula-step"), el("span", "rule", s.rule), " ", el("span", "formula", s.text));
      if (s.value !== null) add(li, " = ", number(s.value, "step"));
      if (s.where) add(li, " ", el("span", "muted", s.where));
      list.appendChild(li);
    });
    box.appendChild(list);
    formula.notes.forEach(function (note) { box.appendChild(el("p", "muted", note)); });
  }

  function showInput(name, quiet) {
    showFormula(name);
    chosenInput = name;
    chosenPath = 0;
    inputNames.forEach(function (n) { inputButtons[n].setAttribute("aria-pressed", n === name ? "true" : "false"); });
    var item = ex.inputs[name], box = $("paths"), label = words.labels[name], scalar = words.scalar[name];
    box.textContent = "";
    box.appendChild(add(el("p", "grad-line"), el("span", "formula", label + " = "),
                        item.grad === null ? number(null, "grad") : tensorView(item.grad, "grad")));
    if (item.why) box.appendChild(el("p", "why", "Why: " + item.why));
    if (item.grad === null) { light(); if (!quiet) announce(inputSummary(name)); return; }
    var counts = words.counts[name], many = item.paths.length < item.paths_count;
    var count = el("p", "count-line", counts.all + " path" + (item.paths_count === 1 ? "" : "s") + " from " + ex.output +
                   " to " + name + (many ? "; the " + item.paths.length + " largest shown" : "") + ".");
    count.dataset.count = counts.all.replace(/,/g, "");
    box.appendChild(count);
    var list = el("ol", "paths");
    item.paths.forEach(function (path, k) {
      var li = el("li", "path");
      li.dataset.index = String(k);
      li.tabIndex = 0;
      li.setAttribute("role", "button");
      li.setAttribute("aria-current", k === chosenPath ? "true" : "false");
      var line = add(el("div", "heads"), el("span", "formula", heads(path) + (scalar ? " = " : " → ")));
      if (scalar) { // as explain writes it: the local derivatives' product, then its value
        if (path.edges.length > 1) {
          path.edges.forEach(function (e, i) {
            if (i) add(line, " × ");
            line.appendChild(number(e.local, "local"));
          });
          add(line, " = ");
        }
        line.appendChild(number(path.product, "product"));
      } else {
        line.appendChild(tensorView(path.product, "product")); // this path's share, in the input's shape
      }
      li.appendChild(line);
      var steps = el("ul");
      path.edges.forEach(function (e) {
        var step = add(el("li", "edge-step"), el("span", "formula", e.formula));
        if (showsLocal(e)) add(step, " = ", tensorView(e.local, "edge-local"));
        add(step, " ", el("span", "op-name", "[" + e.op + "]"));
        steps.appendChild(step);
      });
      li.appendChild(steps);
      li.addEventListener("click", function () { choosePath(k); });
      li.addEventListener("keydown", function (event) {
        if (event.key === "Enter" || event.key === " ") { event.preventDefault(); choosePath(k); }
      });
      list.appendChild(li);
    });
    box.appendChild(list);
    var sum = el("div", "sum");
    sum.id = "sum";
    add(sum, el("span", null, scalar ? "Sum of the products: " : "Sum of the paths' shares: "));
    item.paths.forEach(function (path, k) {
      if (k) add(sum, " + ");
      add(sum, scalar ? number(path.product, "term") : el("span", "term", "path " + (k + 1)));
    });
    if (many) {
      add(sum, " + ", el("span", null, "the other " + counts.others + " paths ("), tensorView(item.rest, "rest"), ")");
      if (!item.exhaustive) add(sum, el("span", "muted", " (found by a heuristic search: not certainly the largest)"));
    }
    add(sum, " = ", el("span", "formula", label + " = "), tensorView(item.grad, "total"));
    box.appendChild(sum);
    light();
    if (!quiet) announce(inputSummary(name));
  }
  function inputSummary(name) {
    var item = ex.inputs[name];
    if (item.grad === null) return words.labels[name] + " is None";
    return words.labels[name] + " = " + short(item.grad) + ": " + words.counts[name].all + " path" +
      (item.paths_count === 1 ? "" : "s");
  }

  function choosePath(k) {
    chosenPath = k;
    Array.prototype.forEach.call($("paths").querySelectorAll("li.path"), function (li) {
      li.setAttribute("aria-current", li.dataset.index === String(k) ? "true" : "false");
    });
    light();
    var path = ex.inputs[chosenInput].paths[k];
    announce("Path " + (k + 1) + ": " + heads(path));
  }

  function light() {
    // every shown path to the chosen input lights up; each lit edge carries its local derivative
    clearClass("lit");
    clearClass("dim");
    if (!svg) return;
    var item = chosenInput === null ? null : ex.inputs[chosenInput];
    if (!item || item.grad === null) { label([]); return; }
    var lit = {}, order = [];
    item.paths.forEach(function (path, k) {
      var link = links.paths[chosenInput][k];
      link.nodes.forEach(function (id) { mark(id, "lit"); });
      link.edges.forEach(function (e, i) {
        if (!e) return;
        markEdge(e, "lit");
        var key = edgeKey(e);
        if (!(key in lit)) {
          lit[key] = { edge: e, text: edgeText(path.edges[i], LABEL_ROOM), whole: edgeText(path.edges[i]), paths: [] };
          order.push(key);
        }
        lit[key].paths.push(k);
      });
    });
    var chosen = order.filter(function (key) { return lit[key].paths.indexOf(chosenPath) >= 0; });
    var labelled = order.length <= LABELS_AT_MOST ? order : chosen;
    label(labelled.map(function (key) { return [lit[key].edge, lit[key].text, lit[key].whole]; }));
    if (order.length > LABELS_AT_MOST) {
      order.forEach(function (key) { if (chosen.indexOf(key) < 0) edgeEls[key].classList.add("dim"); });
    }
    var note = $("paths").querySelector(".labels-note");
    if (order.length > LABELS_AT_MOST && !note) {
      $("paths").insertBefore(el("p", "muted labels-note", order.length + " edges are lit: the graph labels the chosen " +
                                  "path's edges (select a path to label its own)."), $("paths").querySelector("ol.paths"));
    }
  }

  // -- backward, step by step --
  var steps = ex.steps, at = 0;
  function passText(grad, p, li) {
    if (p.local === null) add(li, tensorView(grad, "pass-grad"), " ↦ ", tensorView(p.value, "pass-value"));
    else add(li, tensorView(grad, "pass-grad"), " × ", tensorView(p.local, "pass-local"), " = ",
             tensorView(p.value, "pass-value"));
  }
  function showStep(k, quiet) {
    if (!steps.length) {
      $("step-count").textContent = "No steps";
      $("step").textContent = "Nothing runs backward: the output does not depend on an input that requires grad.";
      ["first", "previous", "next", "last"].forEach(function (id) { $(id).disabled = true; });
      return;
    }
    at = Math.max(0, Math.min(steps.length - 1, k));
    var s = steps[at], link = links.steps[at], box = $("step");
    $("step-count").textContent = "Step " + s.step + " of " + steps.length;
    $("first").disabled = $("previous").disabled = at === 0;
    $("next").disabled = $("last").disabled = at === steps.length - 1;
    box.textContent = "";
    box.dataset.step = String(s.step);
    var said;
    if (s.leaf !== undefined) {
      box.appendChild(add(el("p", "step-head"), el("strong", "step-leaf", s.leaf), el("span", "formula", ".grad += "),
                          tensorView(s.grad, "step-grad"), " ", el("span", "op-name step-op", "[" + s.op + "]")));
      if (s.arrivals > 1) box.appendChild(el("p", "muted arrivals", "the sum of the " + s.arrivals + " gradients it received"));
      box.appendChild(add(el("p"), "Accumulated at the leaf: ", el("span", "formula", s.leaf + ".grad"), " is now ",
                          tensorView(s.total, "step-total")));
      said = s.leaf + ".grad += " + short(s.grad);
    } else {
      var head = add(el("p", "step-head"), "Run ", el("strong", "step-node", s.node));
      if (s.line !== null) add(head, " (line " + s.line + ")");
      add(head, " ", el("span", "op-name step-op", "[" + s.op + (s.retained ? ", retained" : "") + "]"));
      box.appendChild(head);
      box.appendChild(add(el("p"), "It receives ", tensorView(s.grad, "step-grad"),
                          s.arrivals > 1 ? " (the sum of " + s.arrivals + " gradients)" : ""));
      if (s.passes.length) {
        box.appendChild(el("p", null, "and passes on:"));
        var list = el("ul", "passes");
        s.passes.forEach(function (p) {
          var li = el("li", "pass");
          add(li, "to ", el("strong", "pass-to", p.to), p.leaf ? " (a leaf)" : "", ": ");
          passText(s.grad, p, li);
          add(li, " ", el("span", "formula pass-formula", "(" + p.formula + ")"));
          list.appendChild(li);
        });
        box.appendChild(list);
      } else {
        box.appendChild(el("p", "muted", "and passes nothing on."));
      }
      said = s.node + " receives " + short(s.grad);
    }
    clearClass("current");
    clearClass("passing");
    mark(link.node, "current");
    link.passes.forEach(function (e) { markEdge(e, "passing"); });
    hereLine(link.node !== null && nodes[link.node] ? nodes[link.node].line : s.line);
    if (quiet) return; // the page opening: nothing to scroll to or to say yet
    reveal(link.node);
    announce("Step " + s.step + " of " + steps.length + ": " + said);
  }
  $("first").addEventListener("click", function () { showStep(0); });
  $("previous").addEventListener("click", function () { showStep(at - 1); });
  $("next").addEventListener("click", function () { showStep(at + 1); });
  $("last").addEventListener("click", function () { showStep(steps.length - 1); });
  document.addEventListener("keydown", function (event) {
    var target = event.target, tag = target && target.tagName;
    if (event.altKey || event.ctrlKey || event.metaKey || tag === "INPUT" || tag === "TEXTAREA" || tag === "SELECT") return;
    var inSteps = $("steps-section").contains(target);
    if (event.key === "ArrowRight") showStep(at + 1);
    else if (event.key === "ArrowLeft") showStep(at - 1);
    else if (event.key === "Home" && inSteps) showStep(0);
    else if (event.key === "End" && inSteps) showStep(steps.length - 1);
    else return;
    event.preventDefault();
  });

  // -- a node, whole --
  function selectNode(id) {
    var n = nodes[id];
    if (!n) return;
    clearClass("selected");
    mark(id, "selected");
    var box = $("node-details"), dl = el("dl", "details");
    box.textContent = "";
    function row(term, value) { dl.appendChild(el("dt", null, term)); dl.appendChild(add(el("dd"), value)); }
    row("computes", el("span", "formula node-title", nodeTitle(n)));
    row("grad_fn", el("span", "op-name node-op", n.op));
    if (n.leaf) row("kind", el("span", "node-leaf", "leaf" + (n.name && n.name in ex.inputs ? ": an input that requires grad" : "")));
    row("shape", el("span", "mono", "[" + n.shape.join(", ") + "]"));
    row("value", n.value === null ? el("span", "muted", "not kept") : tensorView(n.value, "node-value"));
    if (n.line !== null) row("line", el("span", "mono", String(n.line)));
    box.appendChild(dl);
    hereLine(n.line);
    var said = nodeTitle(n) + ", " + n.op + ", shape [" + n.shape.join(", ") + "]";
    if (n.leaf && n.name && n.name in ex.inputs) { // a leaf picks its input
      showInput(n.name, true);
      said += "; " + inputSummary(n.name);
    }
    announce(said);
  }
  Object.keys(nodeEls).forEach(function (id) {
    var g = nodeEls[id];
    g.addEventListener("click", function () { selectNode(parseInt(id, 10)); });
    g.addEventListener("keydown", function (event) {
      if (event.key === "Enter" || event.key === " ") { event.preventDefault(); selectNode(parseInt(id, 10)); }
    });
  });

  // -- light and dark --
  var themes = ["auto", "light", "dark"];
  $("theme").addEventListener("click", function () {
    var now = themes[(themes.indexOf(document.documentElement.dataset.theme) + 1) % themes.length];
    document.documentElement.dataset.theme = now;
    this.textContent = "Theme: " + now;
    this.setAttribute("aria-label", "Colour theme: " + (now === "auto" ? "follows the system" : now));
  });

  fit();
  if (inputNames.length) showInput(inputNames[0], true);
  showStep(0, true);
  document.documentElement.dataset.ready = "true";
  window.autodiffReady = performance.now();
})();
