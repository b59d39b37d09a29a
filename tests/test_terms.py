"""How query words are read: sentence punctuation around a word is dropped, a word joined by `.`,
`=`, `/` or `:` also matches through its parts, and a quoted phrase stays exactly as written.
Each rule is checked on the terms and on a real library, where it changes what is found."""

from __future__ import annotations

import pytest

from jezero.query import build_match_query, search
from jezero.query.terms import MAX_TERMS, is_stop_word, parse_terms, strip_punctuation, word_forms, word_parts
from jezero.store import open_readonly
from test_query import NOW, build, filler, item


def texts(query: str, tokenizer: str = "trigram remove_diacritics 1") -> list[str]:
    return [t.text for t in parse_terms(query, tokenizer)]


# -- punctuation ---------------------------------------------------------------------------------


@pytest.mark.parametrize("word, expected", [
    ("watches?", "watches"),
    ("heavy,", "heavy"),
    ("InvalidClientTokenId:", "InvalidClientTokenId"),
    ("(see", "see"),
    ("¿qué", "qué"),
    ("'quoted'", "quoted"),
    ("end.", "end"),
    ("wait...", "wait"),
    ("«bonjour»", "bonjour"),
    ("(group)", "group"),
    # what belongs to a name stays
    ("foo()", "foo()"),
    ("list[int]", "list[int]"),
    ("f(x).", "f(x)"),
    (".github", ".github"),
    ("--force", "--force"),
    ("~/.bashrc", "~/.bashrc"),
    ("node@18", "node@18"),
    ("50%", "50%"),
    ("?!", ""),
])
def test_a_word_loses_the_punctuation_around_it(word, expected):
    assert strip_punctuation(word) == expected


def test_the_query_drops_punctuation_but_a_quoted_phrase_keeps_it():
    assert texts("watches? heavy, InvalidClientTokenId:") == ["watches", "heavy", "InvalidClientTokenId"]
    assert texts('"max watches?"') == ["max watches?"]
    assert texts('"InvalidClientTokenId:"') == ["InvalidClientTokenId:"]
    assert texts("ab, ab?") == []  # what is left is too short for trigram
    assert texts("?? ...") == []


# -- joined words --------------------------------------------------------------------------------


@pytest.mark.parametrize("word, parts", [
    ("fs.inotify.max_user_watches=524288", ["fs.inotify.max_user_watches", "524288", "fs", "inotify",
                                            "max_user_watches"]),
    ("src/order_cache.py", ["src", "order_cache.py", "order_cache", "py"]),
    ("aws:InvalidClientTokenId", ["aws", "InvalidClientTokenId"]),
    ("config.yaml", ["config", "yaml"]),
    ("/etc/hosts", ["etc", "hosts"]),
    ("plain_word", []),
    ("a-b", []),  # a hyphen does not join parts
])
def test_joined_words_and_their_parts(word, parts):
    assert word_parts(word) == parts


def test_parts_come_after_every_written_term_and_say_where_they_come_from():
    terms = parse_terms("fs.inotify.max_user_watches=524288 heavy")
    assert [t.text for t in terms] == ["fs.inotify.max_user_watches=524288", "heavy", "fs.inotify.max_user_watches",
                                       "524288", "inotify", "max_user_watches"]  # `fs` is too short
    assert [t.part_of for t in terms[:2]] == [None, None]
    assert {t.part_of for t in terms[2:]} == {"fs.inotify.max_user_watches=524288"}


def test_a_part_already_written_counts_once_and_parts_are_cut_first():
    assert texts("inotify fs.inotify") == ["inotify", "fs.inotify"]
    many = " ".join(f"w{i:03d}.x{i:03d}" for i in range(MAX_TERMS))
    assert texts(many) == [f"w{i:03d}.x{i:03d}" for i in range(MAX_TERMS)]


def test_a_quoted_phrase_has_no_parts():
    assert texts('"fs.inotify.max_user_watches=524288"') == ["fs.inotify.max_user_watches=524288"]
    assert build_match_query('"src/order_cache.py"') == '"src/order_cache.py"'


def test_parts_with_a_word_tokenizer():
    assert texts("fs.inotify.max_user_watches=524288", "unicode61") == [
        "fs.inotify.max_user_watches=524288", "fs.inotify.max_user_watches", "524288", "fs", "inotify",
        "max_user_watches"]


def test_a_possessive_adds_its_word_as_a_part():
    assert [(t.text, t.part_of) for t in parse_terms("my dentist's name?", "unicode61")] == [
        ("my", None), ("dentist's", None), ("name", None), ("dentist", "dentist's")]
    assert texts("Maya’s sister") == ["Maya’s", "sister", "Maya"]
    assert word_parts("can't") == [] and word_parts("a's") == []  # not a possessive of a word
    assert texts('"Nadia\'s farewell"') == ["Nadia's farewell"]  # a quoted phrase stays whole


def test_the_other_forms_of_an_english_word():
    assert {"signed", "signing", "signs"} <= set(word_forms("sign"))
    assert {"sign", "signing"} <= set(word_forms("signed"))
    assert {"race", "races", "raced"} <= set(word_forms("racing"))
    assert "stop" in word_forms("stopped") and "hike" in word_forms("hiking")
    assert word_forms("dog") == [] and word_forms("max_user_watches") == [] and word_forms("Biscuit") == []
    assert "sign" not in word_forms("sign")


def test_stop_words_are_known_and_a_quoted_one_is_not_a_stop_word():
    terms = parse_terms('where did I go hiking Más para "did"', "unicode61 remove_diacritics 2")
    assert [(t.text, is_stop_word(t)) for t in terms] == [
        ("where", True), ("did", True), ("I", False), ("go", False), ("hiking", False), ("Más", True),
        ("para", True)]  # "did" quoted is the same term as did: it counts once, as first written
    [quoted] = parse_terms('"did"', "unicode61")
    assert quoted.exact and not is_stop_word(quoted)
    [phrase] = parse_terms('"where did"', "unicode61")
    assert phrase.exact and not is_stop_word(phrase)


# -- on a library --------------------------------------------------------------------------------


@pytest.fixture
def lib(tmp_path):
    items = [
        item("Dev server stops reloading", "Raised the inotify limit: sysctl max_user_watches set to 524288.",
             days_ago=40),
        item("Watcher limit written whole", "Put fs.inotify.max_user_watches=524288 in /etc/sysctl.conf.",
             days_ago=200),
        item("AWS deploy fails", "The call returned InvalidClientTokenId because the key was rotated.", days_ago=20),
        item("Cache module", "Rewrote order_cache.py for the new eviction rule.", days_ago=10),
        *filler(20),
    ]
    path, ids = build(tmp_path, items)
    c = open_readonly(path)
    yield c, ids
    c.close()


def ids_for(conn, query):
    return [h["id"] for h in search(conn, query, now=NOW)]


def test_trailing_punctuation_no_longer_hides_an_item(lib):
    conn, ids = lib
    aws = ids[2]
    assert ids_for(conn, "InvalidClientTokenId:")[:1] == [aws]
    assert ids_for(conn, "why InvalidClientTokenId?")[:1] == [aws]
    assert ids_for(conn, '"InvalidClientTokenId:"') == []  # quoted: exactly as written


def test_a_joined_word_finds_its_parts_and_the_whole_ranks_first(lib):
    conn, ids = lib
    apart, whole, _, cache = ids[:4]
    got = ids_for(conn, "fs.inotify.max_user_watches=524288")
    assert got[:2] == [whole, apart]  # the older item holding it whole first, then the one holding its parts
    assert ids_for(conn, '"fs.inotify.max_user_watches=524288"') == [whole]
    assert ids_for(conn, "src/order_cache.py")[:1] == [cache]
