"""What a word search can know about each question of the chat sets, and how each system does on it.

The conversational set's questions avoid the words of their facts (chats.py), so a lexical search
can find a fact only through the words the question still shares with its session. This script
sorts every question by that evidence, as the messages lane reads words (its ranking terms:
no stop word, three characters at least, each word with its other forms, terms.word_forms),
within the question's conversation:

- said:       a relevant session holds a ranking word of the question that at most half of the
              conversation's sessions hold (`lessons`, `anniversary`, `Nadia`);
- everywhere: a relevant session holds ranking words of the question, but only words that more
              than half of the conversation's sessions hold (the speakers' names, `day`, `dog`);
- absent:     no relevant session holds any ranking word of the question.

For each class it prints recall@10 and MRR@10 of the messages lane, the fused search and the raw
transcript BM25 (bench.py's reference: the trigram index, every word of the question, stop words
included), two variants of that reference (the question's stop words and words under three
characters left out, as the lane leaves them out; and the word-level tokenizer of the messages
index, stop words left out), and the recall@10 a random order of the conversation's sessions has
(10 / sessions per conversation for one relevant session), and the recall@10 of an order that
reads no query at all: the conversation's sessions with the most words first (`longest`; a
session that was told a fact holds those lines too, so it beats chance where facts are in most
sessions). Where the evidence is only
everywhere-words or absent, every lexical system ranks by accident (storage order for the lane's
newest rows of a common word, trigram substrings and stop words for raw), and the figures are
chance, whichever system leads.

    .venv/bin/python benchmarks/retrieval/chat_evidence.py                  # both chat sets
    .venv/bin/python benchmarks/retrieval/chat_evidence.py --reuse DIR      # a bench.py --keep DIR folder
    .venv/bin/python benchmarks/retrieval/chat_evidence.py --questions      # and each question's words
    .venv/bin/python benchmarks/retrieval/chat_evidence.py --raw-words      # raw's finds, word by word

`--raw-words` lists each question raw BM25 finds within 10 and the fused search does not, with
raw's rank of its first relevant session by the question's each word alone and how many of the
conversation's sessions the trigram index finds holding that word: which word raw found it by.
"""

from __future__ import annotations

import argparse
import re
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import bench  # noqa: E402
from chats import chat_specs  # noqa: E402
from longchats import long_chat_specs  # noqa: E402

from jezero.query import fused  # noqa: E402
from jezero.query.fused import rules  # noqa: E402
from jezero.query import messages as mq  # noqa: E402
from jezero.query.terms import STOP_WORDS, fold, match_expression, parse_terms  # noqa: E402
from jezero.store import DEFAULT_TOKENIZER  # noqa: E402
from jezero.store.messages import MESSAGES_TOKENIZER  # noqa: E402

CLASSES = ("said", "everywhere", "absent")
# A word more than this share of a conversation's sessions hold says nothing about which one.
EVERYWHERE_SHARE = 0.5
SYSTEMS = ("messages", "fused", "raw", "raw_nostop", "raw_words", "longest")
_WORD = re.compile(r"\w+")


class FilteredRaw(bench.RawIndex):
    """The raw transcript BM25 with the question's stop words (and words under three
    characters) left out, as the messages lane leaves them out."""

    def __init__(self, docs, ended, projects, tokenizer: str = DEFAULT_TOKENIZER):
        super().__init__(docs, ended, projects, tokenizer)
        self.tokenizer = tokenizer

    def _rows(self, text, project, count):
        terms = [t for t in parse_terms(text, self.tokenizer)
                 if t.exact or (fold(t.text) not in STOP_WORDS and len(t.text) >= rules.LANE_MIN_CHARS)]
        match = match_expression(terms)
        if not match:
            return []
        where = " AND project = ?" if project else ""
        args = (match, project, count) if project else (match, count)
        return self.db.execute(f"SELECT key, bm25(raw) FROM raw WHERE raw MATCH ?{where} ORDER BY bm25(raw) LIMIT ?",
                               args)


def holders(lib, project: str, term) -> set[str]:
    """The sessions (keys) of `project` whose messages hold the term as the lane reads it."""
    rows = lib.conn.execute(
        "SELECT DISTINCT m.session_id FROM messages_fts CROSS JOIN messages AS m ON m.id = messages_fts.rowid "
        "WHERE messages_fts MATCH ? AND m.project = ?", (mq.lane_expression(term), project))
    return {lib.by_session[r[0]] for r in rows if r[0] in lib.by_session}


def evidence(lib, q, sessions_in: dict[str, int]) -> tuple[str, list[str]]:
    """The question's class and, per ranking word, how many of its conversation's sessions hold
    it and whether a relevant one does."""
    project = lib.projects[q.relevant[0]]
    n = sessions_in[project]
    words, said, everywhere = [], False, False
    for t in mq.terms_for(lib.conn, q.text):
        if not fused._ranking(t):
            continue
        held = holders(lib, project, t)
        hit = bool(held & set(q.relevant))
        words.append(f"{t.text} {len(held)}/{n}{' *' if hit else ''}")
        if hit and len(held) <= EVERYWHERE_SHARE * n:
            said = True
        elif hit:
            everywhere = True
    return ("said" if said else "everywhere" if everywhere else "absent"), words


def raw_words(raw: bench.RawIndex, q, project: str) -> str:
    """Per word of the question: raw's rank of its first relevant session for that word alone
    ('-': not within 10) / the conversation's sessions the trigram index finds holding it."""
    parts = []
    for word in dict.fromkeys(q.text.split()):
        rank = bench.score(raw.ranking(word, project), q.relevant).first or "-"
        match = bench.build_match_query(word)
        held = raw.db.execute("SELECT count(*) FROM raw WHERE raw MATCH ? AND project = ?",
                              (match, project)).fetchone()[0] if match else 0
        parts.append(f"{word} {rank}/{held}")
    return ", ".join(parts)


def run(name: str, specs, queries, folder: Path, reuse: bool, show_questions: bool,
        show_raw_words: bool = False) -> None:
    lib = bench.build_library(specs, folder, "offline", reuse)
    raws = {"raw": bench.RawIndex(lib.docs, lib.ended, lib.projects),
            "raw_nostop": FilteredRaw(lib.docs, lib.ended, lib.projects),
            "raw_words": FilteredRaw(lib.docs, lib.ended, lib.projects, MESSAGES_TOKENIZER)}
    sessions_in: dict[str, int] = defaultdict(int)
    for key in lib.docs:
        sessions_in[lib.projects[key]] += 1
    # the query-free reference: each conversation's sessions, the most words first (then by key)
    word_counts = {key: len(_WORD.findall(doc)) for key, doc in lib.docs.items()}
    longest: dict[str, list[str]] = defaultdict(list)
    for key in sorted(lib.docs, key=lambda k: (-word_counts[k], k)):
        longest[lib.projects[key]].append(key)
    rows: dict[str, list[dict]] = defaultdict(list)
    kinds: dict[str, list[tuple[str, dict]]] = defaultdict(list)
    chance: dict[str, list[float]] = defaultdict(list)
    for q in queries:
        project = lib.projects[q.relevant[0]]
        cls, words = evidence(lib, q, sessions_in)
        row = {}
        for system in SYSTEMS:
            if system == "longest":
                ranking = longest[project][:bench.LIMIT]
            elif system in raws:
                ranking = raws[system].ranking(q.text, project)
            else:
                ranking = bench.lane_ranking(lib.conn, system, q.text, lib.by_session, project=project)
            row[system] = bench.score(ranking, q.relevant)
        rows[cls].append(row)
        kinds[q.kind].append((cls, row))
        chance[cls].append(min(1.0, bench.LIMIT / sessions_in[project]))
        if show_raw_words and (row["raw"].first or 99) <= bench.LIMIT and not row["fused"].first:
            print(f"  raw {row['raw'].first:>2} {q.kind:<12} {q.text[:48]:<48} | {raw_words(raws['raw'], q, project)}")
        if show_questions:
            ranks = " ".join(f"{s} {row[s].first or '-'}" for s in SYSTEMS)
            print(f"  {cls:<10} {q.kind:<12} {q.text[:48]:<48} | {ranks} | {', '.join(words)}")
    print(f"\n{name}: recall@10 / MRR@10 by what the question's words can find (class: see the docstring)")
    print(f"{'class':<11}{'n':>4} | {'chance':>6} | " + " | ".join(f"{s:>13}" for s in SYSTEMS))
    total = [r for c in CLASSES for r in rows[c]]
    for cls, part in [(c, rows[c]) for c in CLASSES] + [("all", total)]:
        if not part:
            continue
        odds = sum(chance[cls]) / len(chance[cls]) if cls != "all" else \
            sum(x for c in CLASSES for x in chance[c]) / len(total)
        cells = " | ".join(f"{bench.mean([r[s] for r in part], 'r10'):.3f} {bench.mean([r[s] for r in part], 'rr'):.3f}"
                           for s in SYSTEMS)
        print(f"{cls:<11}{len(part):>4} | {odds:>6.3f} | {cells}")
    print(f"\n{name}: recall@10 by kind, on the `said` questions / on the others (everywhere and absent)")
    print(f"{'kind':<12}{'said':>5}{'other':>6} | " + " | ".join(f"{s:>11}" for s in SYSTEMS))
    for kind, part in sorted(kinds.items()):
        said = [r for c, r in part if c == "said"]
        other = [r for c, r in part if c != "said"]
        cells = " | ".join(" ".join(f"{bench.mean([r[s] for r in group], 'r10'):.3f}" if group else "    -"
                                    for group in (said, other)) for s in SYSTEMS)
        print(f"{kind:<12}{len(said):>5}{len(other):>6} | {cells}")
    lib.conn.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reuse", type=Path, help="a folder a `bench.py --keep` run left (no ingest)")
    parser.add_argument("--questions", action="store_true", help="list each question, its class, ranks and words")
    parser.add_argument("--raw-words", action="store_true",
                        help="list the questions raw finds and the fused search misses, raw's rank by each word alone")
    args = parser.parse_args()
    tmp = None if args.reuse else tempfile.TemporaryDirectory(prefix="jezero-chat-evidence-")
    folder = args.reuse or Path(tmp.name)
    try:
        for name, (specs, queries), sub in (("conversational set", chat_specs(), "chats"),
                                            ("long-chat set", long_chat_specs(), "longchats")):
            if show := args.questions:
                print(f"\n{name}: class, kind, question | first relevant rank per system | words (sessions holding it"
                      f" / the conversation's; * a relevant session holds it)")
            if args.raw_words:
                print(f"\n{name}: questions raw finds within 10 and the fused search does not | per word: raw's rank "
                      "by that word alone / the conversation's sessions holding it")
            run(name, specs, queries, folder / sub, bool(args.reuse), show, args.raw_words)
    finally:
        if tmp is not None:
            tmp.cleanup()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
