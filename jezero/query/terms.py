"""From free text to an FTS5 expression: words and "quoted phrases", each quoted, OR-ed.

Quoting every term is what makes the input literal: NEAR, AND, NOT, *, ^, `col:` and parentheses
are searched as text, and nothing a person or an agent types can be an FTS5 syntax error.

Two rules read a word the way a person means it (a quoted phrase is left exactly as written):

- Sentence punctuation around a word is not part of it: `watches?`, `heavy,`, `(see` and
  `InvalidClientTokenId:` are searched as `watches`, `heavy`, `see` and `InvalidClientTokenId`.
  With the trigram tokenizer the `?` would be part of the substring looked for, and no item holds
  `watches?`. Characters that belong to names stay: `.github`, `--force`, `~/.bashrc`, `foo()`.
- A word joined by `.`, `=`, `/` or `:` is also searched through its parts, so
  `fs.inotify.max_user_watches=524288` finds an item that says `max_user_watches` and `524288`
  apart, and `src/order_cache.py` one that names only `order_cache.py`. The word itself stays a
  term, so an item holding it whole matches every part too and ranks first. Parts come after
  every written term (MAX_TERMS cuts them first) and carry `part_of`.
- A possessive also adds its word as a part: `dentist's` finds "my dentist", and a message that
  says `Nadia's` still matches both and ranks first.
"""

from __future__ import annotations

import functools
import re
import shlex
import threading
from dataclasses import dataclass

import apsw

from jezero.client_core import STOP_WORDS, fold
from jezero.query.errors import QueryError
from jezero.store import DEFAULT_TOKENIZER

# A pasted log can hold hundreds of words; each one is a phrase FTS5 walks for every query. The
# first 64 distinct terms say what the query is about.
MAX_TERMS = 64
# Longer input is refused before any work: a 1 MB "query" cost seconds of Python outside the
# search budget and hundreds of MB per concurrent call. A pasted error message or stack frame
# fits in 4,000 characters; what is past that says nothing the first 64 terms did not.
MAX_QUERY_CHARS = 4_000
MAX_QUERY_WORDS = 400

_TOKEN = re.compile(r'"([^"]*)"|(\S+)')
# NUL ends a string inside SQLite's C code and lone surrogates cannot be encoded as UTF-8:
# neither can be part of an indexed word, so they separate terms like spaces do.
_UNSAFE = re.compile(r"[\x00\ud800-\udfff]")
# Sentence punctuation that may open or close a word without being part of what is looked for.
# A closing bracket is only stripped when the word does not open it (`foo()`, `list[int]` stay).
_OPENING = "([{<\"'`¿¡«“‘"
_CLOSING = "?!.,;:)]}>\"'`»”’…"
_PAIRS = {")": "(", "]": "[", "}": "{", ">": "<"}
# "my dentist's name": the fact says "my dentist, Dr Okafor". A word-level index reads `dentist's`
# as the phrase `dentist s`, a trigram index as a substring no other form holds.
_POSSESSIVE = re.compile(r"(?<=\w\w)['’]s$", re.IGNORECASE)
# What joins the parts of a setting, a path, a dotted name or a URL. Coarse joins first, so
# `src/order_cache.py` gives `order_cache.py` as well as `order_cache`.
_COARSE = re.compile(r"[=/:]+")
_FINE = re.compile(r"\.+")


@dataclass(frozen=True)
class Term:
    text: str  # as the person wrote it, without the surrounding quotes
    key: tuple  # what the index sees (its tokens): two terms with the same key are one term
    part_of: str | None = None  # for a part of a joined word (`524288` of `max_user_watches=524288`)
    exact: bool = False  # written in "double quotes": searched as written, never dropped as a stop word

    @property
    def quoted(self) -> str:
        return '"' + self.text.replace('"', '""') + '"'


def check_query(text: str) -> None:
    """Refuse a query too long to be a search, with a message saying what to do instead."""
    if len(text) > MAX_QUERY_CHARS:
        raise QueryError(f"the query is {len(text):,} characters long, over the limit of {MAX_QUERY_CHARS:,}: "
                         "search with a few distinctive words or a short part of the error message")
    words = len(text.split())
    if words > MAX_QUERY_WORDS:
        raise QueryError(f"the query has {words:,} words, over the limit of {MAX_QUERY_WORDS:,}: "
                         "search with a few distinctive words or a short part of the error message")


def min_term_length(tokenizer: str) -> int:
    """A trigram index cannot look up fewer than three characters; other tokenizers can."""
    return 3 if split_tokenizer(tokenizer)[0] == "trigram" else 1


def parse_terms(text: str, tokenizer: str = DEFAULT_TOKENIZER) -> list[Term]:
    """The distinct terms of `text`, in the order written.

    Words are split on white space; a pair of double quotes makes a phrase (its inner white space
    collapsed to single spaces). A quote left unpaired is dropped from the word it touches; a quote
    inside a word is kept and searched for. A word loses its sentence punctuation, and a joined
    word adds its parts after every written term (module docstring). Terms shorter than
    `min_term_length` are dropped, as are terms in which the tokenizer finds no token at all
    (punctuation, for unicode61: they could match nothing) and duplicates: two terms are the same
    when the tokenizer reads them the same way, so `Shop` and `shop` (or `brûlée` and `brulee`)
    count once. At most MAX_TERMS are kept.
    """
    if not isinstance(text, str) or not text:
        return []
    if len(text) > 2000:  # a pasted log: parse it, but do not keep it in the cache
        return list(_parse.__wrapped__(text, tokenizer))
    return list(_parse(text, tokenizer))


@functools.lru_cache(maxsize=1024)  # agents repeat and refine queries; parsing is pure
def _parse(text: str, tokenizer: str) -> tuple[Term, ...]:
    text = _UNSAFE.sub(" ", text)
    shortest = min_term_length(tokenizer)
    tokenize = _memory_tokenizer(tokenizer)
    terms: list[Term] = []
    parts: list[tuple[str, str]] = []  # (part, the word it comes from), added after every word
    seen: set[tuple] = set()

    def add(raw: str, part_of: str | None = None, exact: bool = False) -> bool:
        if len(raw) < shortest:
            return False
        key = tokenize(raw)
        if not key or key in seen:  # no token at all (punctuation for unicode61) matches nothing
            return False
        seen.add(key)
        terms.append(Term(raw, key, part_of, exact))
        return len(terms) == MAX_TERMS

    for m in _TOKEN.finditer(text):
        if m.group(1) is not None:  # a quoted phrase: exactly as written
            if add(" ".join(m.group(1).split()), exact=True):
                return tuple(terms)
            continue
        word = strip_punctuation(m.group(2).strip('"'))
        if add(word):
            return tuple(terms)
        parts += [(p, word) for p in _parts_of(word)]
    for part, word in parts:
        if add(part, word):
            break
    return tuple(terms)


def strip_punctuation(word: str) -> str:
    """`word` without the sentence punctuation that opens or closes it (see the module docstring)."""
    start, end = 0, len(word)
    while start < end and word[start] in _OPENING:
        start += 1
    while end > start and word[end - 1] in _CLOSING:
        opener = _PAIRS.get(word[end - 1])
        if opener is not None and opener in word[start:end - 1]:
            break  # `foo()`: the bracket is the word's own
        end -= 1
    return word[start:end]


def word_parts(word: str) -> list[str]:
    """The parts of a word joined by `=`, `/` or `:` and then by `.`, in order, without the word
    itself: `a.b=c` gives `a.b`, `c`, `a`, `b`; a possessive's word: `dentist's` gives `dentist`.
    A word with no joint has no parts."""
    return list(_parts_of(word))


def _parts_of(word: str) -> tuple[str, ...]:
    # Remembered for words of a usual length only: a pasted log's long runs would fill the cache.
    return _word_parts(word) if len(word) <= 100 else _word_parts.__wrapped__(word)


@functools.lru_cache(maxsize=20_000)  # pure, and called for every word of every query and subject
def _word_parts(word: str) -> tuple[str, ...]:
    if _POSSESSIVE.search(word):
        return (_POSSESSIVE.sub("", word),)
    coarse = [strip_punctuation(p) for p in _COARSE.split(word)]
    coarse = [p for p in coarse if p]
    out = coarse if len(coarse) > 1 else []
    for piece in coarse:
        fine = [strip_punctuation(p) for p in _FINE.split(piece)]
        fine = [p for p in fine if p]
        if len(fine) > 1:
            out += fine
    return tuple(p for p in dict.fromkeys(out) if p != word)


def is_stop_word(term: Term) -> bool:
    """Whether a term says nothing about what is meant ("did", "where", "para"): one word of the
    short English and Spanish stop list the first-prompt rule uses (jezero.client_core, the one
    copy), not in quotes. Ranking leaves such terms out; a quoted phrase is always looked for."""
    return not term.exact and len(term.key) == 1 and fold(term.text) in STOP_WORDS


_LETTERS = re.compile(r"[a-z]{4,}")


def word_forms(token: str) -> list[str]:
    """The English inflections of a word as a word-level index holds them: `sign` gives `signs`,
    `signed`, `signing`; `signed` gives `sign` and the same forms; `race` gives `races`, `raced`,
    `racing`. For a lowercase word of four letters or more; anything else has no other form. A
    word-level index has no stems, and people ask "what race did I sign up for" of "I've signed
    up for the Great North Run"."""
    if not _LETTERS.fullmatch(token):
        return []
    stems = {token}
    for suffix in ("ing", "ed", "es", "s"):
        if token.endswith(suffix) and len(token) - len(suffix) >= 3:
            stem = token[: -len(suffix)]
            stems.add(stem)
            if suffix in ("ing", "ed"):
                stems.add(stem + "e")  # racing, raced -> race
                if len(stem) > 3 and stem[-1] == stem[-2]:
                    stems.add(stem[:-1])  # stopped -> stop
    forms = set()
    for stem in stems:
        forms.update((stem, stem + "s", stem + "es", stem + "ed", stem + "ing"))
        if stem.endswith("e"):
            forms.update((stem + "d", stem[:-1] + "ing"))
    forms.discard(token)
    return sorted(forms)


def match_expression(terms: list[Term]) -> str | None:
    return " OR ".join(t.quoted for t in terms) or None


def build_match_query(text: str, tokenizer: str = DEFAULT_TOKENIZER) -> str | None:
    """The FTS5 expression for free text, or None when no usable term is left.

    `analytics shop "consent banner"` becomes `"analytics" OR "shop" OR "consent banner"`.
    """
    return match_expression(parse_terms(text, tokenizer))


# -- how the index reads a term ------------------------------------------------------------------

_memory: apsw.Connection | None = None
_memory_lock = threading.Lock()
_tokenizers: dict[str, object] = {}


def split_tokenizer(spec: str) -> tuple[str, list[str]]:
    """The tokenizer's name and its arguments (a new list: the caller may change it)."""
    name, args = _split_tokenizer(spec)
    return name, list(args)


@functools.lru_cache(maxsize=64)  # a library has one spec; shlex cost ~0.3 ms a call, several per search
def _split_tokenizer(spec: str) -> tuple[str, tuple[str, ...]]:
    try:
        parts = shlex.split(spec or "")
    except ValueError:
        parts = (spec or "").split()
    return (parts[0].lower(), tuple(parts[1:])) if parts else ("unicode61", ())


def tokenizer_function(conn: apsw.Connection, spec: str):
    """`text -> tuple of tokens` as FTS5 reads a query phrase, for the tokenizer `spec` (the
    string stored in the library's meta). Falls back to lowercase words if the connection does
    not know the tokenizer (only possible for a custom one)."""
    name, args = split_tokenizer(spec)
    try:
        tok = conn.fts5_tokenizer(name, args)
    except apsw.Error:
        return lambda text: tuple(text.lower().split())

    def tokens(text: str) -> tuple:
        return tuple(tok(text.encode("utf-8"), apsw.FTS5_TOKENIZE_QUERY, None,
                         include_offsets=False, include_colocated=False))

    return tokens


def _memory_tokenizer(spec: str):
    """The tokenizer on a private in-memory connection, for callers without a library at hand.
    Built-in FTS5 tokenizers behave the same on every connection, and always give the same
    tokens for the same text: a word's tokens are remembered (up to KNOWN_WORDS words per
    tokenizer), since the words of queries and of items' subjects repeat."""
    global _memory
    with _memory_lock:
        fn = _tokenizers.get(spec)
        if fn is None:
            if _memory is None:
                _memory = apsw.Connection(":memory:")
            fn = _tokenizers[spec] = _remembering(tokenizer_function(_memory, spec))
    return fn


# Words whose tokens are kept per tokenizer (a word of a few trigrams: ~1 KB each at most).
KNOWN_WORDS = 50_000


def _remembering(tokenize):
    known: dict[str, tuple] = {}

    def tokens(text: str) -> tuple:
        key = known.get(text)
        if key is None:
            key = tokenize(text)
            if len(text) > 100:  # a long run (a pasted log) is not worth keeping
                return key
            if len(known) >= KNOWN_WORDS:
                known.clear()
            known[text] = key
        return key

    return tokens
