"""The cost of `jezero redact` (jezero/ingest/reredact.py) on a realistic library: CPU time of each
phase, and the file's size before and after.

    nice -n 10 .venv/bin/python benchmarks/redact/library.py [--sessions 2000] [--data DIR] [--repeat 3]

The library is the messages benchmark's (benchmarks/messages/sessions.py: whole sessions, ~40
messages each, the item's original the rendered transcript), built once into --data. Each round
copies it, then runs in this process, with CPU time (time.process_time) taken at each phase:

- `dry`: `jezero redact --dry-run` (a read-only pass: every text through the redactors);
- `pass`: `jezero redact` with a "later" redactor that replaces one word of the corpus found in
  about 1% of the sessions (a customer's name, say) as well as the built-in rules: the scan, the
  rewritten rows, the FTS5 'optimize' of both indexes, the VACUUM and the WAL checkpoint, each
  phase timed from the pass's progress lines;
- `again`: the same pass on the redacted copy (nothing to change: the scan only);
- `read_alone`: every text the pass reads, read from an untouched copy without a redactor;
- `vacuum_alone`: a VACUUM alone of that copy, for scale.

Ratios are within one round (the machine is shared); the median of --repeat rounds is printed.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks" / "messages"))

import apsw  # noqa: E402

from jezero import config as config_mod  # noqa: E402
from jezero import plugins  # noqa: E402
from jezero.hookspecs import hookimpl  # noqa: E402
from jezero.ingest import reredact  # noqa: E402


def build(data: Path, n: int) -> Path:
    import sessions  # benchmarks/messages/sessions.py

    path = data / f"sessions-{n}.sqlite3"
    if not path.exists():
        data.mkdir(parents=True, exist_ok=True)
        print(f"building {n} sessions into {path} ...", file=sys.stderr)
        sessions.build(path, n)
    return path


def pick_word(path: Path, share: float = 0.01) -> tuple[str, int, int]:
    """A word of the corpus, as written, in about `share` of the items' originals: (word, items,
    all items). Candidates come from the messages index's vocabulary (terms there are folded, so
    each is counted in the originals as written)."""
    conn = apsw.Connection(str(path), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        total = conn.execute("SELECT count(*) FROM items").fetchone()[0]
        conn.execute("CREATE VIRTUAL TABLE temp.v USING fts5vocab(main, messages_fts, row)")
        want = share * total
        terms = [t for (t,) in conn.execute(
            "SELECT term FROM temp.v WHERE length(term) >= 6 AND term NOT GLOB '*[^a-z]*' "
            "ORDER BY abs(doc - ?) LIMIT 40", (want * 1.5,))]
        best = None
        for term in terms:
            items = conn.execute("SELECT count(*) FROM items WHERE instr(original, ?) > 0", (term,)).fetchone()[0]
            if items and (best is None or abs(items - want) < abs(best[1] - want)):
                best = (term, items)
            if best and abs(best[1] - want) <= want * 0.2:
                break
        return best[0], best[1], total
    finally:
        conn.close()


class LaterRedactor:
    def __init__(self, word: str):
        self.word = word

    @hookimpl
    def register_redactors(self, register):
        word = self.word

        def redact(text):
            return text.replace(word, "[REDACTED:customer]") if word in text else text

        register("customer", redact)


def config_for(path: Path) -> config_mod.Config:
    toml = path.with_suffix(".toml")
    toml.write_text(f'[storage]\npath = "{path}"\n')
    return config_mod.load(str(toml))


def sized(path: Path) -> int:
    return sum(p.stat().st_size for p in (path, Path(f"{path}-wal")) if p.exists())


def timed_pass(cfg, dry_run: bool) -> tuple[dict, reredact.RedactReport]:
    marks = [("start", time.process_time())]

    def progress(message: str) -> None:
        if not message[0].isdigit():  # a phase begins (the item counts are not phases)
            marks.append((message, time.process_time()))

    report = reredact.redact_library(cfg, dry_run=dry_run, progress=progress)
    marks.append(("end", time.process_time()))
    phases = {}
    names = {"start": "scan and rewrite", "merging the search indexes": "fts5 optimize",
             "rewriting the library file": "vacuum and checkpoint"}
    for (name, t), (_, t_next) in zip(marks, marks[1:]):
        phases[names.get(name, name)] = round(t_next - t, 3)
    phases["total"] = round(marks[-1][1] - marks[0][1], 3)
    return phases, report


def one_round(source: Path, work: Path) -> dict:
    copy = work / "copy.sqlite3"
    for suffix in ("", "-wal", "-shm"):
        Path(f"{copy}{suffix}").unlink(missing_ok=True)
    shutil.copy(source, copy)
    cfg = config_for(copy)
    before = sized(copy)
    dry, dry_report = timed_pass(cfg, True)
    done, report = timed_pass(cfg, False)
    after = sized(copy)
    again, again_report = timed_pass(cfg, False)
    assert again_report.items_changed == 0
    plain = work / "plain.sqlite3"
    shutil.copy(source, plain)
    conn = apsw.Connection(str(plain))
    t = time.process_time()
    read = 0  # every text the pass reads, read alone (no redactor)
    for row in conn.execute("SELECT title, summary, questions, atoms, original FROM items"):
        read += sum(len(x) for x in row)
    for (text,) in conn.execute("SELECT t.text FROM messages AS m JOIN message_texts AS t ON t.id = m.id"):
        read += len(text)
    read_alone = round(time.process_time() - t, 3)
    t = time.process_time()
    conn.execute("VACUUM")
    vacuum = round(time.process_time() - t, 3)
    conn.close()
    plain.unlink()
    return {"bytes_before": before, "bytes_after": after, "dry": dry, "pass": done, "again": again,
            "vacuum_alone": vacuum, "read_alone": read_alone, "text_mb": round(read / 1e6, 1), "items_changed": report.items_changed,
            "messages_changed": report.messages_changed, "items_checked": report.items_checked,
            "messages_checked": report.messages_checked, "dry_items_changed": dry_report.items_changed}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sessions", type=int, default=2000)
    ap.add_argument("--data", type=Path, default=REPO.parent / "runs" / "redact11" / "data")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    source = build(args.data, args.sessions)
    word, items, total = pick_word(source)
    print(f"later redactor: one word found in {items} of {total} items", file=sys.stderr)
    plugins.get_plugin_manager().register(LaterRedactor(word), name="bench-later-redactor")
    rounds = [one_round(source, args.data) for _ in range(args.repeat)]

    def median(get):
        return round(statistics.median(get(r) for r in rounds), 3)

    summary = {"sessions": args.sessions, "mb_before": round(rounds[0]["bytes_before"] / 1e6, 1),
               "mb_after": round(rounds[0]["bytes_after"] / 1e6, 1),
               "items_changed": rounds[0]["items_changed"], "messages_changed": rounds[0]["messages_changed"],
               "items_checked": rounds[0]["items_checked"], "messages_checked": rounds[0]["messages_checked"]}
    for key in ("dry", "pass", "again"):
        summary[key] = {phase: median(lambda r, k=key, p=phase: r[k][p]) for phase in rounds[0][key]}
    summary["vacuum_alone"] = median(lambda r: r["vacuum_alone"])
    summary["read_alone"] = median(lambda r: r["read_alone"])
    summary["text_mb"] = rounds[0]["text_mb"]
    summary["dry_mb_per_cpu_s"] = median(lambda r: r["text_mb"] / r["dry"]["total"])
    summary["pass_over_dry"] = median(lambda r: r["pass"]["total"] / r["dry"]["total"])
    summary["pass_over_vacuum_alone"] = median(lambda r: r["pass"]["total"] / r["vacuum_alone"])
    summary["rounds"] = rounds
    print(json.dumps(summary, indent=2))


if __name__ == "__main__":
    main()
