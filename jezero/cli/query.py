"""Reading the library from the terminal: search, later, timeline, show. Each command opens the
library read-only, calls the query layer with every source allowed (the person at the terminal
owns the library) and only formats the answer."""

from __future__ import annotations

from contextlib import contextmanager
from typing import Annotated, Any, Optional

import typer

from jezero.cli import app
from jezero.cli.common import err, fail, load_config, out, print_json

ALL_SOURCES = ("*",)
SUBJECT_HEADING = "NEWER ON THIS SUBJECT"
TIMELINE_HEADING = "NEWER IN THIS PROJECT (by date, not by subject)"
SUMMARY_CHARS = 240

JsonOpt = Annotated[bool, typer.Option("--json", help="Print the answer as JSON.")]
LimitOpt = Annotated[Optional[int], typer.Option("--limit", "-n", help="How many items (capped at search.max_limit).")]
SinceOpt = Annotated[Optional[str], typer.Option("--since", help="Only items at or after this date or ISO datetime (UTC unless it says otherwise).")]


@contextmanager
def _library():
    """(connection, config) for the configured library; clear errors, no tracebacks."""
    from jezero.query import ItemNotFound, QueryError
    from jezero.store import StoreError, backends

    cfg = load_config(check_plugins=False)  # reading needs no plugin: a cold search stays fast
    try:
        conn = backends.open_reader(cfg)
    except StoreError as e:
        fail(str(e), 1)
    try:
        yield conn, cfg
    except ItemNotFound as e:
        fail(str(e), 1)
    except QueryError as e:
        fail(str(e), 2)
    finally:
        conn.close()


@app.command()
def search(
    query: Annotated[str, typer.Argument(help="Words and \"quoted phrases\"; an item needs one of them to match.")],
    source: Annotated[Optional[str], typer.Option("--source", help="Only this source (exact name).")] = None,
    project: Annotated[Optional[str], typer.Option("--project", "-p", help="Only this project (exact name).")] = None,
    since: SinceOpt = None,
    limit: LimitOpt = None,
    explain: Annotated[bool, typer.Option("--explain", help="Show how each score was made up.")] = False,
    lanes: Annotated[Optional[str], typer.Option("--lanes", help="Rankings to use, comma-separated, fused per session: items, messages, and vectors when the semantic lane is on (default: all of them).")] = None,
    json_out: JsonOpt = False,
) -> None:
    """Search past work: literal words, best match first, recent work slightly favoured.

    The items' summaries and the sessions' transcript messages are ranked apart and fused per
    session (with the semantic lane on, the vectors too)."""
    from jezero import query as q

    with _library() as (conn, cfg):
        hits = q.search(conn, query, allowed=ALL_SOURCES, source=source, project=project, since=since,
                        limit=limit, options=cfg.search, explain=explain, semantic=semantic_lane(cfg),
                        lanes=[x.strip() for x in lanes.split(",") if x.strip()] if lanes is not None else None)
    for note in getattr(hits, "notes", ()):
        err.print(f"note: {note}", markup=False)
    if getattr(hits, "cut", False):
        err.print("note: the search was cut short by its work budget (very common words): these are the best of "
                  "what it looked at; add --project, --source or --since, or use rarer words", markup=False)
    if json_out:
        print_json(hits)
        return
    if not hits:
        out.print("no match. Matching is literal: try a synonym, the singular, a shorter fragment or fewer words.",
                  markup=False)
        return
    for h in hits:
        _print_hit(h)
        if explain and h.get("explain"):
            _print_explain(h["explain"])


def semantic_lane(cfg):
    """The vector lane when `[semantic]` turns it on; None (nothing of it imported) when off."""
    if not cfg.semantic.enabled:
        return None
    from jezero.query.vectors import VectorLane

    return VectorLane(cfg.semantic)


@app.command()
def later(
    item_id: Annotated[int, typer.Argument(help="The item whose subject to follow.")],
    query: Annotated[Optional[str], typer.Argument(help="Words that narrow the subject; the item's own (its decisions and files, else its title) always apply.")] = None,
    limit: LimitOpt = None,
    json_out: JsonOpt = False,
) -> None:
    """Newer items on the same subject as an item (a changed decision, a new status)."""
    from jezero import query as q

    with _library() as (conn, cfg):
        options = cfg.search
        found = q.later(conn, item_id, query, allowed=ALL_SOURCES, limit=limit, options=options)
    if json_out:
        print_json(found)
        return
    _print_later(found)


@app.command()
def timeline(
    project: Annotated[Optional[str], typer.Option("--project", "-p", help="The project's items.")] = None,
    source: Annotated[Optional[str], typer.Option("--source", help="The source's items.")] = None,
    since: SinceOpt = None,
    until: Annotated[Optional[str], typer.Option("--until", help="Only items before this date or ISO datetime.")] = None,
    limit: LimitOpt = None,
    json_out: JsonOpt = False,
) -> None:
    """A project's or a source's items by date, newest first."""
    from jezero import query as q

    if not project and not source:
        fail("timeline needs --project or --source", 2)
    with _library() as (conn, cfg):
        options = cfg.search
        hits = q.timeline(conn, project=project, source=source, since=since, until=until, limit=limit,
                          allowed=ALL_SOURCES, options=options)
    if getattr(hits, "cut", False):
        err.print("note: the search was cut short by its work budget (very common words): these are the best of "
                  "what it looked at; add --project, --source or --since, or use rarer words", markup=False)
    if json_out:
        print_json(hits)
        return
    if not hits:
        out.print("no items for these filters.", markup=False)
    for h in hits:
        _print_hit(h)


@app.command()
def show(
    item_id: Annotated[int, typer.Argument(help="The item's id (from search, later or timeline).")],
    newer: Annotated[bool, typer.Option("--newer", help="Also list newer items on the same subject.")] = False,
    original: Annotated[bool, typer.Option("--original", help="Also print the (redacted) transcript behind it.")] = False,
    json_out: JsonOpt = False,
) -> None:
    """One item in full."""
    from jezero import query as q

    with _library() as (conn, cfg):
        options = cfg.search
        item = q.get_item(conn, item_id, include_original=original, allowed=ALL_SOURCES)
        found = q.later(conn, item_id, allowed=ALL_SOURCES, options=options) if newer else None
    if json_out:
        print_json({**item, "newer": found} if newer else item)
        return
    _print_item(item, original)
    if found is not None:
        out.print()
        _print_later(found, show_item=False)


# -- formatting -------------------------------------------------------------------------------


def _day(occurred_at: str | None) -> str:
    return (occurred_at or "")[:10]


def _where(h: dict[str, Any]) -> str:
    return h.get("source", "") + (f" · {h['project']}" if h.get("project") else "")


def _print_hit(h: dict[str, Any]) -> None:
    score = f"  score {h['score']:.3g}" if isinstance(h.get("score"), float) else ""
    out.print(f"[{h['id']}] {_day(h.get('occurred_at'))}  {_where(h)}{score}", markup=False)
    out.print(f"    {h.get('title', '')}", markup=False)
    summary = (h.get("summary") or "").replace("\n", " ")
    if summary:
        if len(summary) > SUMMARY_CHARS:
            summary = summary[: SUMMARY_CHARS - 1].rstrip() + "…"
        out.print(f"    {summary}", markup=False, style="dim")


def _print_explain(e: dict[str, Any]) -> None:
    fusion = e.get("fusion")
    if fusion:
        ranks = [f"items #{fusion['items_rank']}" if fusion.get("items_rank") else "items: not found",
                 f"messages #{fusion['messages_rank']}" if fusion.get("messages_rank") else "messages: not found"]
        if "vectors_rank" in fusion:
            ranks.append(f"vectors #{fusion['vectors_rank']} (similarity {fusion['vectors_similarity']:.3f}, "
                         f"nearest: {fusion['vectors_nearest']})" if fusion.get("vectors_rank") else "vectors: not near")
        line = f"    fused {fusion['score']:.4g} ({', '.join(ranks)})"
        if fusion.get("matched_terms"):
            line += f"; message {fusion['message_id']} ({fusion['message_role']}) holds: " + ", ".join(fusion["matched_terms"])
        if fusion.get("left_out_of_messages"):
            line += "; phrases of common words, left to the items: " + ", ".join(fusion["left_out_of_messages"])
        if fusion.get("capped_in_messages"):
            line += "; read at their newest messages only: " + ", ".join(fusion["capped_in_messages"])
        if fusion.get("messages_no_say"):
            line += "; no say in the fusion for it: its words read at their newest messages only, the items did not find it"
        elif fusion.get("messages_say_by_items_gate") is not None:
            line += (f"; its words read at their newest messages only: its place counts as its items gate, "
                     f"{fusion['messages_say_by_items_gate']:.3g}")
        if fusion.get("newer_on_near_tie"):
            line += "; placed above an older session that scored nearly as much"
        out.print(line, markup=False, style="cyan")
    gate = e.get("gate")  # the items' gate (query/fused/gate.py gate_why)
    if gate:
        came = {"read_unread": "; read in its own messages: " + ", ".join(gate.get("read_terms") or ()),
                "none": "; the messages lane found none of the words in its transcript"}.get(gate["evidence_from"], "")
        if gate.get("inherited_from"):
            came += f"; taken from {gate['inherited_from']}, the hit it was placed before"
        out.print(f"    items gate {gate['gate']:.3g}: evidence {gate['evidence']:.4g} of {gate['compared_with']:.4g}"
                  f"{came}", markup=False, style="cyan")
    if "bm25" not in e:
        return
    fields = e.get("fields") or {}
    parts = ", ".join(f"{k} {v:.3g}" for k, v in fields.items() if v)
    line = (f"    bm25 {e['bm25']:.4g}: relevance {e['relevance']:.4g} x recency {e['recency_factor']:.3f} "
            f"({e['age_days']:.0f} days) = {e['score']:.4g}")
    out.print(line, markup=False, style="cyan")
    detail = []
    if parts:
        detail.append(f"by field: {parts}")
    if e.get("matched_terms"):
        detail.append("matched: " + ", ".join(e["matched_terms"]))
    if e.get("ignored_terms"):
        detail.append("left out (in half the library or more): " + ", ".join(e["ignored_terms"]))
    if e.get("candidates") and e["candidates"] != "best_bm25":
        detail.append(f"candidates: {e['candidates']}")
    if detail:
        out.print("    " + "; ".join(detail), markup=False, style="cyan")


def _print_later(found: dict[str, Any], *, show_item: bool = True) -> None:
    if show_item:
        it = found["item"]
        out.print(f"after [{it['id']}] {_day(it.get('occurred_at'))} {it.get('title', '')}", markup=False)
        out.print()
    heading = SUBJECT_HEADING if found["matched_by"] == "subject" else TIMELINE_HEADING
    out.print(heading, markup=False, style="bold")
    if not found["items"]:
        out.print("  nothing newer", markup=False)
    for h in found["items"]:
        _print_hit(h)


def _print_item(item: dict[str, Any], original: bool) -> None:
    out.print(f"[{item['id']}] {item.get('title', '')}", markup=False, style="bold")
    meta = [f"source {item.get('source')}", f"agent {item.get('agent')}"]
    if item.get("project"):
        meta.append(f"project {item['project']}")
    meta += [f"session {item.get('session_id')}", item.get("occurred_at") or ""]
    out.print(" · ".join(meta), markup=False, style="dim")
    out.print()
    out.print(item.get("summary", ""), markup=False)
    if item.get("questions"):
        out.print()
        out.print("Questions:", markup=False, style="bold")
        for question in item["questions"]:
            out.print(f"  - {question}", markup=False)
    if item.get("atoms"):
        out.print()
        out.print("Atoms:", markup=False, style="bold")
        for atom in item["atoms"]:
            out.print(f"  {atom.get('type', '?')}: {atom.get('text', '')}", markup=False)
    if original:
        out.print()
        out.print("Original:", markup=False, style="bold")
        out.print(item.get("original", ""), markup=False)


@app.command()
def recall(
    query: Annotated[Optional[str], typer.Argument(help="Words and \"quoted phrases\" (whole words); messages holding more of them come first.")] = None,
    boolean: Annotated[Optional[str], typer.Option("--boolean", "-b", help="Instead of QUERY: an FTS5 expression, e.g. 'deploy AND (rollback OR revert)'.")] = None,
    role: Annotated[Optional[list[str]], typer.Option("--role", help="Only this role (user, assistant, tool, system); repeatable.")] = None,
    tools: Annotated[bool, typer.Option("--tools", help="Also tool calls and their output.")] = False,
    subagents: Annotated[bool, typer.Option("--subagents", help="Also subagents' sessions.")] = False,
    since: Annotated[Optional[str], typer.Option("--since", help="Only messages at or after this date or ISO datetime (UTC unless it says otherwise).")] = None,
    before: Annotated[Optional[str], typer.Option("--before", help="Only messages before this ISO datetime; a bare date includes that day.")] = None,
    project: Annotated[Optional[list[str]], typer.Option("--project", "-p", help="Only this project (exact name); repeatable.")] = None,
    source: Annotated[Optional[str], typer.Option("--source", help="Only this source (exact name).")] = None,
    min_messages: Annotated[Optional[int], typer.Option("--min-messages", help="Only sessions with at least this many messages.")] = None,
    sort: Annotated[Optional[str], typer.Option("--sort", help="relevance (default), newest or oldest.")] = None,
    window: Annotated[Optional[int], typer.Option("--window", "-w", help="Messages shown either side of each hit (default 2, at most 10).")] = None,
    discover: Annotated[bool, typer.Option("--discover", help="One hit per project: each matching project's newest.")] = False,
    limit: Annotated[Optional[int], typer.Option("--limit", "-n", help="How many hits (default 10; capped at search.max_limit).")] = None,
    explain: Annotated[bool, typer.Option("--explain", help="Show the rule that placed each hit.")] = False,
    json_out: JsonOpt = False,
) -> None:
    """Find the transcript messages that hold some words, with the messages around them."""
    from jezero import query as q

    if not query and not boolean:
        fail("recall needs a QUERY or --boolean", 2)
    with _library() as (conn, cfg):
        options = cfg.search
        found = q.recall(conn, query, boolean=boolean, allowed=ALL_SOURCES, role=role, include_tools=tools,
                         include_subagents=subagents, since=since, before=before, projects=project, source=source,
                         min_messages=min_messages, sort=sort, limit=limit, window=window, discover=discover,
                         options=options)
    if json_out:
        print_json(found)
        return
    _print_recall(found, explain)


def _print_recall(found: dict[str, Any], explain: bool) -> None:
    if found.get("note"):
        out.print(found["note"], markup=False)
    if found.get("timed_out"):
        out.print("recall ran out of time: use rarer words or a filter.", markup=False)
    entries = found.get("projects") if "projects" in found else found.get("hits", [])
    if not entries and not found.get("timed_out"):
        out.print("no message holds these words.", markup=False)
        return
    windows = {a: w for w in found.get("windows", []) for a in w["anchors"]}
    shown: set[int] = set()
    for h in entries:
        where = h["source"] + (f" · {h['project']}" if h.get("project") else "")
        count = f"  ({h['hits']} hits)" if "hits" in h else ""
        out.print(f"[item {h['item_id']}] {_day(h['at'])}  {where}  {h['role']}{count}", markup=False)
        out.print(f"    {h.get('snippet', '')}", markup=False)
        if explain:
            e = h["explain"]
            out.print(f"    {e['method']}: {e['rule']}", markup=False, style="cyan")
        w = windows.get(h["message_id"])
        if w is not None and id(w) not in shown:
            shown.add(id(w))
            for m in w["messages"]:
                mark = ">" if m["id"] in w["anchors"] else " "
                text = " ".join((m["text"] or "").split())
                text = text[: SUMMARY_CHARS - 1] + "…" if len(text) > SUMMARY_CHARS else text
                out.print(f"      {mark} {m['role']}: {text}", markup=False, style="dim")
