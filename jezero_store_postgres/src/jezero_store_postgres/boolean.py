"""recall's boolean mode on PostgreSQL: an FTS5 expression (AND, OR, NOT, parentheses, "quoted
phrases", `a + b` phrases, words side by side meaning AND) as a tsquery over messages_search.

The expression is first checked by FTS5 itself (jezero.query.messages.check_expression, in
memory), so what reaches to_tsquery() is valid FTS5, with its precedence: words side by side bind
tightest, then NOT, then AND, then OR (fts5parse.y). NEAR groups, column filters, `^` and prefix
`*` have no tsquery equivalent with FTS5's meaning: they are refused with a plain message.
"""

from __future__ import annotations

import re

from jezero.query.errors import QueryError

from jezero_store_postgres.messages import phrase_query, tokens

_TOKEN = re.compile(r'\s*(?:(")((?:[^"]|"")*)"|([()+*^:,{}-])|([^\s()"+*^:,{}-]+))')
OPERATORS = ("AND", "OR", "NOT")


def _lex(expr: str) -> list[tuple[str, str]]:
    out, pos = [], 0
    while pos < len(expr):
        m = _TOKEN.match(expr, pos)
        if m is None or m.end() == pos:
            if expr[pos:].strip() == "":
                break
            raise QueryError(f"boolean query: cannot read {expr[pos:]!r}")
        pos = m.end()
        if m.group(1):
            out.append(("string", m.group(2).replace('""', '"')))
        elif m.group(3):
            out.append(("punct", m.group(3)))
        elif m.group(4) in OPERATORS:
            out.append(("op", m.group(4)))
        elif m.group(4) == "NEAR" and expr[pos:].lstrip().startswith("("):
            raise _unsupported("NEAR groups")
        else:
            out.append(("string", m.group(4)))
    return out


def _unsupported(what: str) -> QueryError:
    return QueryError(f"boolean query: {what} are not supported by the postgres backend; use AND, OR, NOT, "
                      "parentheses and \"quoted phrases\"")


class _Parser:
    def __init__(self, expr: str):
        self.toks = _lex(expr)
        self.i = 0
        self.phrases: list[tuple[str, ...]] = []

    def peek(self):
        return self.toks[self.i] if self.i < len(self.toks) else (None, None)

    def take(self):
        tok = self.peek()
        self.i += 1
        return tok

    def expr(self) -> str:  # OR: lowest
        left = self.conj()
        while self.peek() == ("op", "OR"):
            self.take()
            left = f"({left} | {self.conj()})"
        return left

    def conj(self) -> str:
        left = self.negation()
        while self.peek() == ("op", "AND"):
            self.take()
            left = f"({left} & {self.negation()})"
        return left

    def negation(self) -> str:
        left = self.primary()
        while self.peek() == ("op", "NOT"):
            self.take()
            left = f"({left} & !{self.primary()})"
        return left

    def primary(self) -> str:
        kind, value = self.peek()
        if (kind, value) == ("punct", "("):
            self.take()
            inner = self.expr()
            if self.take() != ("punct", ")"):
                raise QueryError("boolean query: unbalanced parentheses")
            return inner
        if kind == "punct" and value in ("^", "*"):
            raise _unsupported("'^' and prefix '*' queries")
        if kind == "punct" or kind is None:
            raise _unsupported("column filters")
        parts = [self.phrase()]
        while self.peek()[0] == "string":  # words side by side: AND, binding tightest
            parts.append(self.phrase())
        return parts[0] if len(parts) == 1 else "(" + " & ".join(parts) + ")"

    def phrase(self) -> str:
        words: list[str] = []
        while True:
            kind, value = self.take()
            words += tokens(value, query=True)
            if self.peek() == ("punct", "+"):
                self.take()
                continue
            break
        if self.peek() == ("punct", "*"):
            raise _unsupported("prefix '*' queries")
        if self.peek() == ("punct", ":"):
            raise _unsupported("column filters")
        if not words:
            raise QueryError(f"boolean query: {value!r} holds no word to look for")
        phrase = tuple(words)
        self.phrases.append(phrase)
        return f"({phrase_query(phrase)})"


def to_tsquery(expr: str) -> tuple[str, list[tuple[str, ...]]]:
    """(the tsquery text, the expression's phrases as token tuples) of a valid FTS5 expression."""
    parser = _Parser(expr)
    query = parser.expr()
    if parser.i != len(parser.toks):
        raise QueryError(f"boolean query: cannot read {expr!r}")
    return query, list(dict.fromkeys(parser.phrases))
