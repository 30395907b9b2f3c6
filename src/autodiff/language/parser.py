"""Parsing: tokens through the grammar's LALR tables into the syntax tree.

The driver is the textbook LALR loop over the tables Lark compiled (grammar.py), with one
addition: the state a reduction leaves on top, with the run of unit reductions that follows it
(`test -> or_test -> ... -> atom`, which only relabel the top of the stack), and that state's
action on the lookahead, are remembered per (rule, state below, lookahead) and taken in one
step. Each rule reduces by its reducer: reducers.py's, written by reducer_writer.py from the
rule's shape and builders.py's BUILDERS. Nothing recurses: the parse stack is a list.

Tokens are (type, text, start, end) tuples (tokenizer.fast_tokens), cheaper to make than
objects by far; a reducer knows from the tables which of its symbols are tokens and reads their
fields by index. A rejected token is explained (syntax_errors.py) with the careful tokenizer's
Token objects, the same tokens, so that every message is computed as before.
"""

from __future__ import annotations

from . import ast
from ._gc import collector_paused
from .builders import _Late
from .errors import InputProblem, SyntaxProblem
from .grammar import Tables, tables
from .source import Source
from .syntax_errors import syntax_error
from .tokenizer import fast_tokens, tokenize


MAX_SOURCE_CHARACTERS = 8 * 1024 * 1024  # about 8 MB of program text


def parse(text: str, name: str = "<expr>") -> ast.Program:
    """Parse a program; raises SyntaxProblem with the place and, in words, what was expected."""
    source = text if isinstance(text, Source) else Source(text, name)
    if len(source.text) > MAX_SOURCE_CHARACTERS:
        raise InputProblem(
            f"the program is too large: {len(source.text):,} characters (at most {MAX_SOURCE_CHARACTERS:,})", source
        )
    grammar = tables()
    with collector_paused():
        tokens = fast_tokens(source, grammar)
        if tokens is None:  # something the careful tokenizer explains, or must handle
            tokens = [token.as_tuple() for token in tokenize(source, grammar)]
        try:
            return _Driver(grammar).run(tokens, source)
        except _Late as late:
            raise SyntaxProblem(late.message, source, late.node.start, late.node.end) from None


class _Driver:
    _compiled: dict = {}  # per tables: (steps memo, reducers, rule sizes)

    def __init__(self, grammar: Tables) -> None:
        self.grammar = grammar
        compiled = self._compiled.get(id(grammar))
        if compiled is None:
            reducers = _shipped_reducers(grammar)
            if reducers is None:  # reducers.py is not the tables' (being rebuilt): each written when first used
                reducers = []
                reducers += [_on_first_use(reducers, number, rule) for number, rule in enumerate(grammar.rules)]
            steps = [{} for _ in grammar.rules]  # per rule: state below -> lookahead -> (state, action)
            compiled = self._compiled[id(grammar)] = (steps, reducers, [rule.size for rule in grammar.rules])
        self.steps, self.reducers, self.sizes = compiled

    def run(self, tokens: list, source: Source) -> ast.Program:
        actions = self.grammar.actions
        reducers, sizes, steps = self.reducers, self.sizes, self.steps
        top = self.grammar.start_state
        states = [top]
        values: list = []
        for token in tokens:
            kind = token[0]
            try:
                action = actions[top][kind]
            except KeyError:
                raise self._rejected(source, tokens, token, top) from None
            while action < 0:  # reduce by rule ~action (that is, -1 - action)
                number = ~action
                size = sizes[number]
                # The rule's symbols become one value, whose state takes the first symbol's slot.
                if size == 1:
                    values[-1] = reducers[number](values[-1])
                elif size:
                    values[-size:] = (reducers[number](*values[-size:]),)
                    del states[1 - size:]
                else:
                    values.append(reducers[number]())
                    states.append(None)
                try:  # nested subscripts: cheaper than hashing and comparing a (below, rule, kind) key
                    top, action = steps[number][states[-2]][kind]
                except KeyError:
                    top, action = self._step(states[-2], number, kind)
                states[-1] = top
                if action is None:  # no action: the end, or an error
                    if top == self.grammar.end_state and kind == "$END":
                        return values[-1]
                    raise self._rejected(source, tokens, token, top) from None
            states.append(action)  # shift
            values.append(token)
            top = action
        raise AssertionError("the parser ended without accepting")  # the tables always accept at $END

    def _rejected(self, source: Source, tokens: list, token: tuple, state: int) -> SyntaxProblem:
        """The error for a token the parser has no action for (a lexical error's own, at its token),
        told with the careful tokenizer's Token objects: the same tokens, at the same index."""
        index = next(i for i, candidate in enumerate(tokens) if candidate is token)
        tokens = tokenize(source, self.grammar)
        if tokens[index].type == "$ERROR":
            return tokens[index].error
        return syntax_error(source, tokens, index, self.grammar.actions[state])

    def _step(self, below: int, number: int, kind: str) -> tuple:
        """(state, its action on `kind`, None if it has none) after reducing rule `number` on
        top of state `below`: both remembered, so that a reduction looks them up at once."""
        state = self._goto(below, number, kind)
        step = (state, self.grammar.actions[state].get(kind))
        self.steps[number].setdefault(below, {})[kind] = step
        return step

    def _goto(self, below: int, number: int, kind: str) -> int:
        """The state after reducing rule `number` on top of state `below`, with the unit
        reductions that follow it for this lookahead taken at once: they only relabel the top."""
        actions = self.grammar.actions
        rules = self.grammar.rules
        state = actions[below][rules[number].origin]
        while True:
            action = actions[state].get(kind)
            if action is None or action >= 0 or not rules[-1 - action].passes_through:
                return state
            state = actions[below][rules[-1 - action].origin]


def _shipped_reducers(grammar: Tables) -> list | None:
    """The reducers of reducers.py, one per rule of the shipped tables: written out by
    build_tables and compiled in Python's bytecode cache, where writing and compiling each
    reducer a program uses cost about 0.1 ms of its start. None where reducers.py was written
    for other tables (grammar_tables.py rebuilt alone)."""
    from .grammar import shipped_data, tables

    if grammar is not tables():
        return None
    from . import reducers

    if reducers.GRAMMAR != shipped_data()["grammar_sha256"] or len(reducers.REDUCERS) != len(grammar.rules):
        return None
    return list(reducers.REDUCERS)


def _on_first_use(reducers: list, number: int, rule):
    """A stand-in that writes rule `number`'s reducer when it first runs (see _shipped_reducers)."""

    def first(*raw):
        from .reducer_writer import compiled_reducer  # only where reducers.py is not the tables'

        reducers[number] = reduce = compiled_reducer(rule)
        return reduce(*raw)

    return first
