"""later's subject rule: the item's own match no longer sets a bar nothing else reaches, the
subject without a query includes what the item decided and touched, and unrelated newer work of
the project stays out. benchmarks/retrieval/README.md has the figures on decision chains."""

from __future__ import annotations

import dataclasses
import importlib

import pytest

from jezero.query import later
from jezero.query.current import SELF_SHARE as LATER_SELF_SHARE
from jezero.query.current import subject_text as later_subject
from jezero.store import Store, open_readonly
from test_query import NOW, build, filler, item


def decided(rec, *texts, kind="decision"):
    """`rec` with atoms of `kind` (the shared `item` helper writes facts only)."""
    return dataclasses.replace(rec, atoms=[*rec.atoms, *({"type": kind, "text": t} for t in texts)])


@pytest.fixture
def ci(tmp_path):
    """A CI decision revised twice; the first title is a complaint that shares little with the
    revisions, which name the runners and the workflow file. The unrelated items avoid `the`: in
    a library this small it is a rare word (in a real one, in half the items, it weighs nothing)."""
    items = [
        decided(item("The builds are slow and cost too much, sort it out",
                     "Moved the pipelines to runners on GitHub.", days_ago=300),
                "CI runs on GitHub-hosted ubuntu-latest runners via .github/workflows/python-ci.yml"),
        item("Footer colours for the shop", "Changed the footer colours.", days_ago=250),
        decided(item("Minutes ran out again this month",
                     "Self-hosted runners on the Hetzner box now run python-ci.yml.", days_ago=200),
                "CI now runs on self-hosted runners on the Hetzner AX41"),
        item("Typo on about page", "Fixed a typo.", days_ago=150),
        decided(item("The runner box filled its disk", "Back to GitHub-hosted larger runners.", days_ago=100),
                "CI is back on GitHub-hosted runners, the 4-core ones; the Hetzner runners are gone"),
        item("Newsletter signup form", "Added a newsletter form to the shop.", days_ago=50),
        *filler(30, project="elsewhere"),
    ]
    path, ids = build(tmp_path, items)
    conn = open_readonly(path)
    yield conn, ids
    conn.close()


def ids_of(found):
    return [h["id"] for h in found["items"]]


def test_without_a_query_the_revisions_are_found_not_the_timeline(ci):
    conn, ids = ci
    found = later(conn, ids[0], now=NOW)
    assert found["matched_by"] == "subject"
    assert ids_of(found) == [ids[4], ids[2]]  # newest first; the footer, typo and newsletter work stay out
    middle = later(conn, ids[2], now=NOW)
    assert middle["matched_by"] == "subject" and ids_of(middle) == [ids[4]]


def test_the_subject_is_the_title_and_what_the_item_settled(ci):
    conn, ids = ci
    subject = later_subject(conn, {"id": ids[0], "title": "The builds are slow and cost too much, sort it out"})
    assert subject.splitlines() == ["The builds are slow and cost too much, sort it out",
                                    "CI runs on GitHub-hosted ubuntu-latest runners via .github/workflows/python-ci.yml"]


def test_the_last_of_a_chain_lists_nothing_on_its_subject(ci):
    conn, ids = ci
    found = later(conn, ids[4], now=NOW)
    assert found["matched_by"] == "project_timeline"
    assert ids_of(found) == [ids[5]]  # by date, flagged as such


def test_the_item_itself_does_not_set_the_bar(tmp_path):
    """The item states its subject in full; the revision names one part of it. Under the seed's rule (0.3 of
    the best hit, the item included) the revision fell below the bar; now the bar is a smaller
    share of the item's own relevance and a share of the best other hit."""
    items = [
        item("okapi lemur tapir zebu", "okapi lemur tapir zebu, counted", days_ago=100, atoms=["okapi lemur tapir zebu"]),
        item("a note on the okapi", "something about an okapi", days_ago=50),
        item("unrelated", "kettle", days_ago=40),
        *filler(30),
    ]
    path, ids = build(tmp_path, items)
    conn = open_readonly(path)
    from jezero.query.search import _search
    from jezero.config import SearchConfig
    hits = _search(conn, "okapi lemur tapir zebu", project="shop", since=None, limit=50, options=SearchConfig(),
                   now=NOW, recency_weight=0.0)
    own, other = (next(h["score"] for h in hits if h["id"] == i) for i in ids[:2])
    assert LATER_SELF_SHARE * own <= other < 0.3 * own  # the old bar would have dropped it
    assert ids_of(later(conn, ids[0], now=NOW)) == [ids[1]]
    conn.close()


def test_an_item_with_unreadable_atoms_still_has_its_title_as_subject(tmp_path):
    path, ids = build(tmp_path, [item("okapi sighting", "okapi", days_ago=20), item("okapi again", "okapi", days_ago=5),
                                 *filler(10)])
    with Store(path) as rw:  # the library's own writer connection, on either backend
        rw.db.execute("UPDATE items SET atoms = 'not json' WHERE id = ?", (ids[0],))
    conn = open_readonly(path)
    assert later_subject(conn, {"id": ids[0], "title": "okapi sighting"}) == "okapi sighting"
    assert ids_of(later(conn, ids[0], now=NOW)) == [ids[1]]
    conn.close()


def test_with_a_query_a_hit_must_also_be_on_the_items_subject(ci, monkeypatch):
    """Generic words match much of a project: the shop's footer and newsletter work match `shop`
    as well as the revisions match `runners`. The item's own subject keeps them out."""
    conn, ids = ci
    found = later(conn, ids[0], "shop builds runners", now=NOW)
    assert found["matched_by"] == "subject" and ids_of(found) == [ids[4], ids[2]]
    monkeypatch.setattr(importlib.import_module("jezero.query.search"), "_on_its_subject",
                        lambda conn, item, *args: [{"id": i} for i in ids])
    loose = ids_of(later(conn, ids[0], "shop builds runners", now=NOW))
    assert {ids[1], ids[5]} & set(loose)  # without the subject test the unrelated shop work got in


def test_with_a_query_a_drifting_chain_is_followed(tmp_path):
    """Each revision shares words with the one before it, the last hardly any with the first:
    it is kept because it is on the middle step's subject."""
    items = [
        decided(item("Add web analytics to the shop", "Google Analytics on every page.", days_ago=300),
                "We use Google Analytics 4 (gtag.js) on every page, property G-SHOP2026"),
        decided(item("Consent banner needed for Google Analytics", "Switched to Plausible.", days_ago=200),
                "The analytics script is now Plausible, cookieless; Google Analytics removed; Plausible costs 9/month"),
        decided(item("Nobody reads the dashboard", "Server logs only.", days_ago=100),
                "No analytics script any more: nginx access logs via goaccess; Plausible cancelled, saving 9/month"),
        item("Footer links", "Footer links for the shop.", days_ago=50),
        *filler(30, project="elsewhere"),
    ]
    path, ids = build(tmp_path, items)
    conn = open_readonly(path)
    from jezero.query import current
    first = {"id": ids[0], "title": "Add web analytics to the shop", "occurred_at": "0"}
    texts = current._Texts(conn, ids[:3], "trigram remove_diacritics 1")
    rel = current._subject_relevance(conn, first, [first, {"id": ids[2]}], texts, "trigram remove_diacritics 1")
    assert rel[ids[2]] < current.SELF_SHARE * rel[ids[0]]  # the last step alone is off the first's subject
    found = later(conn, ids[0], "analytics", now=NOW)
    assert found["matched_by"] == "subject" and ids_of(found) == [ids[2], ids[1]]
    conn.close()


@pytest.fixture
def chat(tmp_path):
    """Two friends' sessions: every item shares the speakers' names and everyday words; one plan
    (a climbing trip to Tresaigües) is made in one session and called off in a later one, which
    shares with it the place and the trip, not the rest. The titles are small talk, as a chat's first lines are."""
    small = ["Noor: the bus was late again, work is busy", "Noor: we cooked dinner and watched a film",
             "Noor: work is busy, the weather is grey", "Noor: we watched a film, the bus was late"]
    items = [
        item(small[0], "Noor and Iker talked about work.", days_ago=200, project="noor-iker",
             atoms=["Noor: We booked the climbing trip to Tresaigües for the long weekend in May, with Iker's van."]),
        *(item(small[i % 4], "Noor and Iker talked about work and dinner.", days_ago=190 - 10 * i,
               project="noor-iker", atoms=[f"Noor: we cooked dinner and watched a film with Iker, day {i}"])
          for i in range(8)),
        item(small[1], "Noor and Iker talked about films.", days_ago=90, project="noor-iker",
             atoms=["Iker: the Tresaigües climbing trip is off, the gorge is closed after the floods; we stay home."]),
        *(item(small[(i + 2) % 4], "Noor and Iker talked about the weather.", days_ago=80 - 5 * i,
               project="noor-iker", atoms=[f"Noor: work is busy and the weather is grey, said Iker, week {i}"])
          for i in range(6)),
        *filler(30, project="elsewhere"),
    ]
    path, ids = build(tmp_path, items)
    conn = open_readonly(path)
    yield conn, ids
    conn.close()


def test_without_a_query_the_subject_is_the_words_few_items_of_the_project_hold(chat):
    """The speakers' names, `work`, `dinner` and `film` are in most of the project's items: they
    tell nothing apart. What is left (Tresaigües, climbing, trip...) finds the session that
    called the plan off, and none of the small talk."""
    conn, ids = chat
    found = later(conn, ids[0], now=NOW)
    assert found["matched_by"] == "subject" and ids_of(found) == [ids[9]]
    from jezero.config import SearchConfig
    from jezero.query import current
    from jezero.query.search import _search, brief

    item0 = brief(conn, ids[0], ("*",))
    pool = _search(conn, current.subject_text(conn, item0), limit=50, options=SearchConfig(), now=NOW,
                   recency_weight=0.0, project="noor-iker")
    kept = [t.text for t in current.distinctive_terms(conn, item0, pool, "trigram remove_diacritics 1")]
    assert "Tresaigües" in kept and "Noor" not in kept and "Iker" not in kept


def test_without_a_query_the_closest_revisions_subject_is_followed(tmp_path, monkeypatch):
    """A chain drifts: the third step names the second's choice, not the first's. From the first,
    later lists both, because the third is on the second's distinctive subject."""
    items = [
        decided(item("Product search is slow", "Postgres full-text search for products.", days_ago=300),
                "We use Postgres full-text search with a GIN index on products"),
        decided(item("Typos find nothing", "Moved search to Meilisearch.", days_ago=200),
                "Search now uses Meilisearch instead of Postgres full-text search"),
        decided(item("The search box costs too much", "Meilisearch replaced.", days_ago=100),
                "Replaced Meilisearch with Typesense on the same box"),
        item("Footer links", "Footer links for the shop.", days_ago=150),
        item("Newsletter form", "A newsletter form for the shop.", days_ago=50),
        *filler(30, project="elsewhere"),
    ]
    path, ids = build(tmp_path, items)
    conn = open_readonly(path)
    found = later(conn, ids[0], now=NOW)
    assert found["matched_by"] == "subject" and ids_of(found) == [ids[2], ids[1]]
    monkeypatch.setattr(importlib.import_module("jezero.query.search"), "LATER_FOLLOW", 0)
    assert ids_of(later(conn, ids[0], now=NOW)) == [ids[1]]  # the first's own words miss the third step
    conn.close()


@pytest.fixture
def state(tmp_path):
    """A state-library revision that also edited a screen, then a crash fix in that screen whose
    only other tie to the state work is `useState` (`state` inside a longer word)."""
    items = [
        decided(decided(item("Every tiny feature needs a slice, actions and selectors",
                             "Replaced Redux Toolkit with Zustand for the app state.", days_ago=200),
                        "State management moved from Redux Toolkit to Zustand (src/store/spots.ts)"),
                "src/screens/TideChart.tsx", "src/store/spots.ts", kind="file"),
        decided(decided(item("The tide chart screen crashes in landscape",
                             "useState was called inside a branch of src/screens/TideChart.tsx.", days_ago=100),
                        "Fixed the rotation crash in src/screens/TideChart.tsx (conditional useState)", kind="fix"),
                "src/screens/TideChart.tsx", kind="file"),
        *(item(f"Screen polish {n}", f"Polished screen {n}.", days_ago=150 - n) for n in range(4)),
        *filler(30, project="elsewhere"),
    ]
    path, ids = build(tmp_path, items)
    conn = open_readonly(path)
    yield conn, ids
    conn.close()


def test_a_newer_item_sharing_only_a_file_is_not_a_revision(state, monkeypatch):
    # The crash fix holds the revision's file (its path, its parts) and `state` only inside
    # `useState`; none of the decision's own words (Zustand, Redux, Toolkit, management).
    conn, ids = state
    found = later(conn, ids[0], now=NOW)
    assert found["matched_by"] == "project_timeline"  # nothing on its subject: the newer items by date
    current_mod = importlib.import_module("jezero.query.current")
    monkeypatch.setattr(current_mod, "FILES_ALONE", False)
    current_mod.forget()
    found = later(conn, ids[0], now=NOW)
    assert found["matched_by"] == "subject" and ids_of(found) == [ids[1]]  # on the file's words it looked like one


@pytest.fixture
def big_chat(tmp_path):
    """A conversation larger than later's pool (LATER_POOL, 50). A dinner at the Crown is booked,
    then moved in a later session, which names the Crown again. Sixty sessions of small talk
    repeat the first session's title: they are the 50 that match its whole subject best. Eighty
    more hold one of `booked`, `dinner`, `Monday`, `evening` each: common in the conversation,
    yet nearly absent from those 50. A newer session books a dinner at home on a Monday evening."""
    small = "Maya: that sounds stressful, hope it settles down at work"
    items = [
        item(small, "Maya and Tom talked.", days_ago=300, project="maya-tom",
             atoms=["Maya: We booked dinner at the Crown on Monday evening for the anniversary."]),
        *(item(small, f"Maya and Tom talked, round {i}.", days_ago=290 - i, project="maya-tom") for i in range(60)),
        *(item(f"{word} {FILL[i % len(FILL)]}", f"A {word} note, {i}.", days_ago=220 - i, project="maya-tom")
          for word in ("booked", "dinner", "Monday", "evening") for i in range(20)),
        item("Maya: long week", "Maya and Tom talked.", days_ago=100, project="maya-tom",
             atoms=["Tom: we booked dinner at home on Monday evening, just pasta."]),
        item("Maya: good news", "Maya and Tom talked.", days_ago=50, project="maya-tom",
             atoms=["Maya: the Crown moved our anniversary table to Friday."]),
        *filler(30, project="elsewhere"),
    ]
    path, ids = build(tmp_path, items)
    conn = open_readonly(path)
    yield conn, ids
    conn.close()


FILL = ["kettle", "pigeon", "walnut", "meadow", "copper", "lantern", "harbour", "violet", "saddle", "quarry"]


def test_in_a_large_project_a_word_many_of_its_items_hold_is_no_shared_subject(big_chat, monkeypatch):
    """The pool of the 50 best matches is not the project: `booked`, `dinner`, `Monday` and
    `evening` are in under a quarter of it, and in 20 sessions each of the project. A newer
    session sharing only those words is not on the subject (LATER_COUNT_IN_SCOPE); the one that
    names the Crown is."""
    conn, ids = big_chat
    home, crown = ids[-32], ids[-31]
    found = later(conn, ids[0], now=NOW)
    assert found["matched_by"] == "subject" and ids_of(found) == [crown]
    monkeypatch.setattr(importlib.import_module("jezero.query.search"), "LATER_COUNT_IN_SCOPE", False)
    importlib.import_module("jezero.query.current").forget()
    assert home in ids_of(later(conn, ids[0], now=NOW))  # counted in the pool, the shared words passed
