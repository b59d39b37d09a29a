"""The current decision first: search places a newer hit of the same project on an older hit's
subject just before it, when the older one leads by at most MAX_LEAD; exact old matches, other
projects and unrelated newer work keep their places, and nothing is dropped."""

from __future__ import annotations

import dataclasses
import importlib

import pytest
from test_fused import NOW as FUSED_NOW
from test_fused import item as session
from test_fused import lane_library, sessions
from test_query import NOW, build, filler, item

from jezero.query import current as current_mod
from jezero.query import search
from jezero.store import open_readonly


def decided(rec, *texts):
    return dataclasses.replace(rec, atoms=[*rec.atoms, *({"type": "decision", "text": t} for t in texts)])


@pytest.fixture
def lib(tmp_path):
    items = [
        # a decision stated at length in the words people ask with, revised later in fewer words
        decided(item("Product search engine for the shop: Meilisearch",
                     "The shop's product search engine is now Meilisearch, with typo tolerance and synonyms "
                     "for the product search.", days_ago=400),
                "Product search engine is Meilisearch"),
        decided(item("Replace Meilisearch with Typesense", "Moved product search to Typesense.", days_ago=30),
                "Product search moved from Meilisearch to Typesense"),
        # an old exact fix and newer work that merely mentions its subject
        decided(item("Webhook fails: SignatureVerificationError",
                     "stripe SignatureVerificationError No signatures found matching the expected signature: "
                     "the webhook secret was the test one.", days_ago=300),
                "Webhook secret set to the live signing secret"),
        item("Stripe webhook retries dashboard", "Looked at webhook retries: the webhook secret is the live signing "
             "secret.", days_ago=10),
        # another project's newer item on the same words
        item("Product search engine for the blog", "The blog's product search engine is now Typesense too.",
             project="blog", days_ago=5),
        *filler(30, project="elsewhere"),
    ]
    path, ids = build(tmp_path, items)
    conn = open_readonly(path)
    yield conn, ids
    conn.close()


ITEMS = ("items",)  # the rule works on the items ranking (in a fused search, before fusion)


def ids_of(hits):
    return [h["id"] for h in hits]


def test_the_current_decision_comes_first_and_the_old_one_stays(lib):
    conn, ids = lib
    plain = search(conn, "shop product search engine", project="shop", now=NOW, lanes=ITEMS, current_first=False)
    assert ids_of(plain)[:2] == [ids[0], ids[1]]  # the stale decision wins on words and recency
    assert plain[0]["score"] <= current_mod.MAX_LEAD * plain[1]["score"]
    hits = search(conn, "shop product search engine", project="shop", now=NOW, lanes=ITEMS)
    assert ids_of(hits)[:2] == [ids[1], ids[0]]
    assert sorted(ids_of(hits)) == sorted(ids_of(plain))  # nothing dropped or added


def test_explain_says_which_hit_moved(lib):
    conn, ids = lib
    hits = search(conn, "shop product search engine", project="shop", now=NOW, lanes=ITEMS, explain=True)
    placed = hits[0]["explain"]["placed"]
    assert placed["rule"] == "current_first" and placed["before"] == ids[0]
    assert placed["subject_share"] >= current_mod.MOVE_SHARE
    assert "placed" not in hits[1]["explain"]


def test_an_exact_old_fix_keeps_first_place(lib, monkeypatch):
    conn, ids = lib
    query = "stripe SignatureVerificationError: No signatures found matching the expected signature"
    plain = search(conn, query, now=NOW, lanes=ITEMS, current_first=False)
    assert ids_of(plain)[:2] == [ids[2], ids[3]]
    assert plain[0]["score"] > current_mod.MAX_LEAD * plain[1]["score"]  # on its subject, but far behind
    assert ids_of(search(conn, query, now=NOW, lanes=ITEMS)) == ids_of(plain)
    monkeypatch.setattr(current_mod, "MAX_LEAD", 100.0)  # only the lead keeps it first
    assert ids_of(search(conn, query, now=NOW, lanes=ITEMS))[:2] == [ids[3], ids[2]]


def test_another_projects_newer_item_is_not_moved(lib):
    conn, ids = lib
    hits = search(conn, "product search engine", now=NOW, lanes=ITEMS, explain=True)
    blog = ids_of(hits).index(ids[4])
    assert "placed" not in hits[blog]["explain"]


def test_a_lead_above_max_lead_is_kept(lib, monkeypatch):
    conn, ids = lib
    monkeypatch.setattr(current_mod, "MAX_LEAD", 1.0)
    monkeypatch.setattr(current_mod, "REVISION_LEAD", 1.0)  # the revision names Meilisearch as replaced
    hits = search(conn, "shop product search engine", project="shop", now=NOW, lanes=ITEMS)
    assert ids_of(hits)[:2] == [ids[0], ids[1]]


def test_unrelated_newer_work_is_not_moved(lib, monkeypatch):
    conn, ids = lib
    monkeypatch.setattr(current_mod, "MOVE_SHARE", 0.99)  # nothing newer is that close to the subject
    monkeypatch.setattr(current_mod, "NAMED_REVISION", False)  # (the revision names Meilisearch as replaced)
    hits = search(conn, "shop product search engine", project="shop", now=NOW, lanes=ITEMS)
    assert ids_of(hits)[:2] == [ids[0], ids[1]]


def test_a_broken_library_row_leaves_the_order_alone(lib, monkeypatch):
    conn, ids = lib

    def broken(*a, **k):
        import apsw
        raise apsw.InterruptError("out of time")

    monkeypatch.setattr(current_mod, "_subject_relevance", broken)
    hits = search(conn, "shop product search engine", project="shop", now=NOW, lanes=ITEMS)
    assert ids_of(hits)[:2] == [ids[0], ids[1]]


def test_the_fused_search_puts_the_current_decision_first_too(lib):
    conn, ids = lib
    hits = search(conn, "shop product search engine", project="shop", now=NOW)
    assert ids_of(hits)[:2] == [ids[1], ids[0]]


def test_newer_work_sharing_only_the_projects_words_is_not_placed_first(tmp_path):
    """The sitemap session names the shop's category pages, as the Redis cache session and most of
    the shop's work do: on the old item's title and atoms it looks like a revision, but none of
    the words that tell the cache apart (Redis, cached, minutes) is in it, so it stays below."""
    items = [
        decided(item("Redis cache for the category pages", "Category pages of the shop are cached in Redis.",
                     days_ago=200), "Category pages cached in Redis for ten minutes per category page"),
        item("Sitemap for the category pages", "The sitemap lists every category page and product page of the shop.",
             days_ago=20, atoms=["sitemap.xml lists every category page"]),
        *(item(f"Category page layout {n}", f"Category page {n} of the shop got a new grid.", days_ago=100 + n)
          for n in range(6)),
        *filler(30, project="elsewhere"),
    ]
    path, ids = build(tmp_path, items)
    conn = open_readonly(path)
    query = "category pages cache"
    plain = search(conn, query, now=NOW, lanes=ITEMS, current_first=False)
    assert ids_of(plain)[:2] == [ids[0], ids[1]]
    assert plain[0]["score"] <= current_mod.MAX_LEAD * plain[1]["score"]  # close enough to be moved
    from jezero.query.search import library_tokenizer
    tok = library_tokenizer(conn)
    texts = current_mod._Texts(conn, ids_of(plain), tok)
    sitemap = next(h for h in plain if h["id"] == ids[1])
    title_share = current_mod._subject_relevance(conn, plain[0], [plain[0], sitemap], texts, tok)
    assert title_share[ids[1]] >= current_mod.MOVE_SHARE * title_share[ids[0]]  # the title test alone would move it
    hits = search(conn, query, now=NOW, lanes=ITEMS)
    assert ids_of(hits) == ids_of(plain)
    conn.close()


def typed(rec, kind, *texts):
    return dataclasses.replace(rec, atoms=[*rec.atoms, *({"type": kind, "text": t} for t in texts)])


@pytest.fixture
def backend(tmp_path):
    """A compiler's backend chosen at length (LLVM via inkwell, no decision atom: its outcome was a
    number), revised later by a short session whose decision names LLVM/inkwell as what it
    replaced; newer GC work touches the revision's file; an unrelated newer decision replaces
    something else."""
    items = [
        typed(item("Native backend: lower the typed IR to machine code",
                   "Native code generation: the typed IR is lowered through LLVM via inkwell to an object file.",
                   project="plume", days_ago=400),
              "file", "plume-codegen/src/llvm.rs"),
        typed(decided(item("Can't build plume anymore: CI needs 20 minutes to install LLVM",
                           "Cranelift is pure Rust and builds in seconds.", project="plume", days_ago=200),
                      "Backend switched from LLVM/inkwell to Cranelift (plume-codegen/src/clif.rs)"),
              "file", "plume-codegen/src/clif.rs"),
        typed(item("Garbage collector: mark and sweep", "Shadow stack roots pushed by the emitted code.",
                   project="plume", days_ago=20), "file", "plume-codegen/src/clif.rs", "plume-runtime/src/gc.rs"),
        decided(item("Yearly stats run out of memory", "The native code of pandas ran out of memory.",
                     project="plume", days_ago=10), "Stats moved from pandas to DuckDB"),
        *(typed(item(f"Plume chore {n}", f"Chore {n} of the plume compiler.", project="plume", days_ago=300 - n),
                "file", f"plume-codegen/src/chore{n}.rs") for n in range(6)),
        *filler(30, project="elsewhere"),
    ]
    path, ids = build(tmp_path, items)
    conn = open_readonly(path)
    yield conn, ids
    conn.close()


QUERY = "native code generation backend"


def test_a_revision_naming_the_old_choice_as_replaced_comes_first(backend, monkeypatch):
    conn, ids = backend
    plain = search(conn, QUERY, project="plume", now=NOW, lanes=ITEMS, current_first=False)
    assert ids_of(plain)[0] == ids[0]
    revision = next(h for h in plain if h["id"] == ids[1])
    assert plain[0]["score"] > current_mod.MAX_LEAD * revision["score"]  # the share rule would not move it
    hits = search(conn, QUERY, project="plume", now=NOW, lanes=ITEMS, explain=True)
    assert ids_of(hits)[:2] == [ids[1], ids[0]]
    assert hits[0]["explain"]["placed"]["names_it_replaced"] is True
    assert sorted(ids_of(hits)) == sorted(ids_of(plain))  # nothing dropped
    monkeypatch.setattr(current_mod, "NAMED_REVISION", False)
    assert ids_of(search(conn, QUERY, project="plume", now=NOW, lanes=ITEMS))[0] == ids[0]


def test_a_revision_naming_the_old_choice_still_has_a_lead_bound(backend, monkeypatch):
    conn, ids = backend
    monkeypatch.setattr(current_mod, "REVISION_LEAD", 1.0)
    assert ids_of(search(conn, QUERY, project="plume", now=NOW, lanes=ITEMS))[0] == ids[0]


def test_what_a_decision_replaced_is_read_from_its_words():
    clauses = current_mod.replaced_clauses
    assert clauses("Backend switched from LLVM/inkwell to Cranelift 0.110 (clif.rs).") == ["LLVM/inkwell"]
    assert clauses("Product search now runs on Typesense instead of Meilisearch, which was OOM-killed") == \
        ["Meilisearch"]
    assert clauses("go with typesense, remove meili completely") == ["meili completely"]
    assert clauses("Usamos Typesense en lugar de Meilisearch.") == ["Meilisearch"]
    assert clauses("Rate limiting is now a Redis token bucket") == []


def test_a_newer_decision_replacing_something_else_is_not_a_revision(backend):
    conn, ids = backend
    # "Stats moved from pandas to DuckDB" is newer, of the project, and its item holds `native
    # code`; what it replaced (pandas) is no word of the backend's subject
    hits = search(conn, QUERY + " pandas", project="plume", now=NOW, lanes=ITEMS, explain=True)
    stats = next(h for h in hits if h["id"] == ids[3])
    assert "placed" not in stats["explain"]


def test_newer_work_sharing_only_a_file_is_not_placed_before_the_revision(backend, monkeypatch):
    # After the revision moves first it is an anchor too: the GC session touches its file
    # (plume-codegen/src/clif.rs) and, on the file's words, holds a share of its subject; none of
    # the revision's other words (Cranelift, switched, inkwell) is in it (FILES_ALONE).
    conn, ids = backend
    assert ids_of(search(conn, QUERY, project="plume", now=NOW, lanes=ITEMS))[:2] == [ids[1], ids[0]]
    monkeypatch.setattr(current_mod, "FILES_ALONE", False)
    current_mod.forget()
    assert ids_of(search(conn, QUERY, project="plume", now=NOW, lanes=ITEMS))[0] == ids[2]


def test_saying_again_what_the_old_decision_replaced_is_no_revision(tmp_path):
    # "a call rather than texting", said again months later, names `texting` as replaced: that is
    # what the first session replaced too, not its choice
    items = [
        decided(item("Catching up with Tom", "Maya and Tom agree to talk more often.", project="chat", days_ago=300),
                "We should catch up properly soon, a call rather than texting"),
        decided(item("Back from the trip", "Maya is back from her trip.", project="chat", days_ago=30),
                "We should catch up properly soon, a call rather than texting"),
        decided(item("Plans for the weekend", "Tom wants to go hiking.", project="chat", days_ago=20),
                "Moved from texting to weekly calls"),
        *(item(f"Chat {n}", f"Small talk {n}.", project="chat", days_ago=200 - n) for n in range(6)),
        *filler(30, project="elsewhere"),
    ]
    path, ids = build(tmp_path, items)
    conn = open_readonly(path)
    try:
        from jezero.query.search import library_tokenizer
        hits = [h for h in search(conn, "catch up call texting trip weekend", project="chat", now=NOW, lanes=ITEMS,
                                  current_first=False)]
        anchor = next(h for h in hits if h["id"] == ids[0])
        newer = [h for h in hits if h["id"] in ids[1:3]]
        assert len(newer) == 2
        tok = library_tokenizer(conn)
        texts = current_mod._Texts(conn, (), tok)
        assert current_mod.revises(conn, anchor, newer, hits, texts, tok) == []
    finally:
        conn.close()


# -- the current value first when only the transcripts say it ------------------------------------
# The current value first when only the transcripts say it (current.newer_on_the_query,
# TRANSCRIPT_SUBJECT): a fact said in passing ("my daughter goes to Oakfield", later "we moved my
# daughter to Riverside Academy") is not in either session's title or atoms, so the items' subject
# rule cannot see that the two sessions are on one subject, and the older one, found by both lanes,
# stays first. In the fused search the newer session whose transcript holds the query's words the
# older one's holds comes first, unless the older's item says them, the words are held by more than
# TRANSCRIPT_HOLDERS sessions, or the older's evidence leads by more than MAX_LEAD. A real SQLite
# library with items and messages, through search().

fused = importlib.import_module("jezero.query.fused")
rules = importlib.import_module("jezero.query.fused.rules")

UPDATE_QUERY = "which school does my daughter go to now"
OLD_SAID = "my daughter goes to Oakfield"
TALK = "and stayed for hours talking about the garden, the weather and the neighbours"
NEW_SAID = "we moved my daughter to Riverside Academy after half term, she is much happier there now"


def update_records(old_atoms=(), newer_holders=0, new_said=NEW_SAID, new_project="home"):
    """An old session whose summary (not its title or atoms) keeps the fact, a newer one whose
    transcript alone holds the new value, everyday sessions of the same person, and
    `newer_holders` more sessions saying the query's word in passing."""
    old = session("old", "Slow cooker times", "Asked: slow cooker times. Also: " + OLD_SAID,
                  [("user", "how long does a stew take in a slow cooker?"), ("user", OLD_SAID),
                   ("assistant", "about eight hours on low")], project="home", day=1)
    old = dataclasses.replace(old, atoms=[{"type": "fact", "text": t} for t in old_atoms])
    out = [
        old,
        session("new", "Half marathon training", "Asked: a training plan for a half marathon.",
                [("user", "can you make me a training plan for a half marathon?"), ("user", new_said),
                 ("assistant", "three runs a week, one long")], project=new_project, day=20),
        *(session(f"o{i}", f"Chores {i}", "Everyday things.", [("user", f"other notes {i} about the garden")],
                  project="home", day=2 + i) for i in range(6)),
        *(session(f"d{i}", f"Visitors {i}", "Tea with friends.",
                  [("user", f"the parents of my daughter's friend {i} came over for tea on Sunday afternoon {TALK}")],
                  project="home", day=3 + i)
          for i in range(newer_holders)),
    ]
    return out


def test_the_newer_session_holding_the_querys_words_comes_first_when_the_items_do_not_say_them(tmp_path,
                                                                                                  monkeypatch):
    c = lane_library(tmp_path, update_records())
    try:
        assert sessions(search(c, UPDATE_QUERY, lanes=("items",), now=FUSED_NOW))[:1] == ["old"]  # its summary matched
        assert "new" not in sessions(search(c, UPDATE_QUERY, lanes=("items",), now=FUSED_NOW))
        lane = fused.message_lane(c, UPDATE_QUERY, sources=None, source=None, project=None, since=None,
                                  time_budget_ms=250)
        assert sessions(search(c, UPDATE_QUERY, lanes=("messages",), now=FUSED_NOW))[:2] == ["old", "new"]  # no near tie
        ratio = lane.evidence[("claude-local", "new")] / lane.evidence[("claude-local", "old")]
        assert 1 / current_mod.MAX_LEAD <= ratio < 1 - rules.NEAR_TIE
        hits = search(c, UPDATE_QUERY, now=FUSED_NOW, explain=True)
        assert sessions(hits)[:2] == ["new", "old"]  # nothing dropped: the old one is next
        placed = hits[0]["explain"]["placed"]
        assert placed["rule"] == "newer_on_the_query" and placed["words"] == ["daughter"]
        assert placed["before"] == hits[1]["id"]
        monkeypatch.setattr(current_mod, "TRANSCRIPT_SUBJECT", False)
        assert sessions(search(c, UPDATE_QUERY, now=FUSED_NOW))[:2] == ["old", "new"]
    finally:
        c.close()


def test_an_older_item_that_says_the_words_keeps_its_place(tmp_path):
    # The old session's atoms state the fact: the items' subject rule (current_first) decides, and
    # the newer item says nothing of it, so nothing moves.
    c = lane_library(tmp_path, update_records(old_atoms=["My daughter goes to Oakfield"]))
    try:
        assert sessions(search(c, UPDATE_QUERY, now=FUSED_NOW))[:2] == ["old", "new"]
    finally:
        c.close()


def test_words_many_sessions_hold_are_not_one_subject(tmp_path):
    # With TRANSCRIPT_HOLDERS newer sessions more saying "daughter" in passing, the word is no
    # longer one subject restated: the old session keeps its place.
    c = lane_library(tmp_path, update_records(newer_holders=current_mod.TRANSCRIPT_HOLDERS))
    try:
        assert sessions(search(c, UPDATE_QUERY, now=FUSED_NOW))[0] == "old"
    finally:
        c.close()
    folder = tmp_path / "fewer"
    folder.mkdir()
    c = lane_library(folder, update_records(newer_holders=current_mod.TRANSCRIPT_HOLDERS - 2))
    try:
        assert sessions(search(c, UPDATE_QUERY, now=FUSED_NOW))[0] == "new"
    finally:
        c.close()


def test_a_clearly_better_older_transcript_and_other_projects_keep_their_places(tmp_path):
    # The newer one says the word once in a long message: the old one's evidence leads by more than
    # MAX_LEAD. And a newer session of another project is never placed before it.
    long_said = "my daughter " + " ".join(f"filler{i}" for i in range(150))
    c = lane_library(tmp_path, update_records(new_said=long_said))
    try:
        lane = fused.message_lane(c, UPDATE_QUERY, sources=None, source=None, project=None, since=None,
                                  time_budget_ms=250)
        assert lane.evidence[("claude-local", "old")] > current_mod.MAX_LEAD * lane.evidence[("claude-local", "new")]
        assert sessions(search(c, UPDATE_QUERY, now=FUSED_NOW))[0] == "old"
    finally:
        c.close()
    folder = tmp_path / "other"
    folder.mkdir()
    c = lane_library(folder, update_records(new_project="work"))
    try:
        assert sessions(search(c, UPDATE_QUERY, now=FUSED_NOW))[0] == "old"
    finally:
        c.close()
