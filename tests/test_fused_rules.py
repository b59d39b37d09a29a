"""The fused search's rules have one place (jezero/query/fused/rules.py), read at call time: a
rule patched there changes the search, `fused.X` is the same attribute (read and written through),
and no module of the package holds a copy that a patch would miss."""

from __future__ import annotations

import importlib
import pkgutil

import pytest

from jezero.query import search
from jezero.query.fused import rules
from test_fused import NOW, conn, sessions  # noqa: F401 (conn: the fixture, its library)

fused = importlib.import_module("jezero.query.fused")
RULES = sorted(name for name in vars(rules) if name.isupper())


def scores(conn):
    hits = search(conn, "inotify max_user_watches", now=NOW, explain=True)
    return sessions(hits), [h["score"] for h in hits]


def test_a_rule_patched_in_rules_changes_the_search(conn, monkeypatch):
    order, before = scores(conn)
    monkeypatch.setattr(rules, "RRF_K", 1)
    assert scores(conn) != (order, before)
    top = search(conn, "inotify max_user_watches", now=NOW, explain=True)[0]
    assert top["explain"]["fusion"]["shares"]["messages"] == pytest.approx(
        top["explain"]["fusion"]["lanes"]["messages"] / (1 + top["explain"]["fusion"]["ranks"]["messages"]))
    monkeypatch.undo()
    assert scores(conn) == (order, before)


def test_fused_x_is_the_rules_attribute(conn, monkeypatch):
    assert all(getattr(fused, name) is getattr(rules, name) for name in RULES)
    monkeypatch.setattr(rules, "RRF_K", 1)
    by_rules = scores(conn)
    monkeypatch.undo()
    monkeypatch.setattr(fused, "RRF_K", 1)  # the older spelling: the same rule, not a copy
    assert rules.RRF_K == 1 and fused.RRF_K == 1
    assert scores(conn) == by_rules
    monkeypatch.undo()
    assert rules.RRF_K == fused.RRF_K == 60
    from jezero.query.fused import NEAR_TIE  # (`from ... import` reads it too)
    assert NEAR_TIE == rules.NEAR_TIE
    with pytest.raises(AttributeError):
        fused.NO_SUCH_RULE
    with pytest.raises(AttributeError):
        del fused.NEAR_TIE


def test_no_module_of_the_package_holds_a_copy_of_a_rule():
    """A `from rules import X` (or a constant moved back into a module) would be read where it
    was copied, and a patch of rules.X would change nothing there."""
    for info in pkgutil.iter_modules(fused.__path__):
        module = importlib.import_module(f"{fused.__name__}.{info.name}")
        if module is rules:
            continue
        assert not set(vars(module)) & set(RULES), module.__name__
    assert not set(vars(fused)) & set(RULES)
