"""`jezero embed`: embed the library on purpose, when the semantic lane is turned on for a library
that already holds items, or the embedder's model changed (then the old vectors are dropped
first: two models' vectors never mix).

Resumable: items are embedded in batches, each batch written with its progress marks
(item_vector_state) in one transaction, and the next batch is chosen by those marks. A run
killed at any point leaves whole batches only; the next run starts with the first item still
behind, and never writes an item's vectors twice. It runs under the run lock, so no `jezero run`
writes meanwhile.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from jezero.config import Config
from jezero.ingest.runner import exclusive, open_store

# Items embedded per transaction: large enough that the embedder works on full batches (its
# throughput grows with the batch), small enough that a killed run loses little.
DEFAULT_BATCH = 64


@dataclass
class EmbedReport:
    embedder: str
    model_id: str
    dimension: int
    replaced: str | None = None  # the model id whose vectors were dropped
    items: int = 0  # in the library
    behind: int = 0  # needing vectors when the run started
    embedded: int = 0
    removed: int = 0  # vectors of items deleted while the lane was off
    windows: int = 0  # message windows embedded
    lane_enabled: bool = False
    notes: list[str] = field(default_factory=list)

    def as_dict(self) -> dict:
        return dict(self.__dict__)


def prepare(config: Config) -> str:
    """Run the configured embedder's `prepare` (the one step that may fetch or derive a model)."""
    from jezero import plugins

    kind = plugins.embedder_types().get(config.semantic.embedder)
    if kind is None:
        raise LookupError(f"embedder {config.semantic.embedder!r} is not installed; pip install jezero-embedders")
    if kind.prepare is None:
        return f"embedder {kind.name!r} needs no preparing"
    return str(kind.prepare(dict(config.semantic.options)))


def embed_library(config: Config, *, batch: int = DEFAULT_BATCH,
                  progress: Callable[[int, int], None] | None = None) -> EmbedReport:
    """Bring every item's vectors up to date with the configured embedder."""
    from jezero.store import vectors

    if batch < 1:
        raise ValueError("--batch must be at least 1")
    with exclusive(config, "jezero embed"):
        with open_store(config, vectors=False) as store:
            db = store.db
            embedder = vectors.build_embedder(config.semantic)
            vectors.load_extension(db)
            previous = vectors.recorded(db)
            writer = vectors.VectorWriter(db, config.semantic.embedder, embedder, replace_model=True,
                                          window_chars=config.semantic.window_chars)
            report = EmbedReport(writer.model.embedder, writer.model.model_id, writer.model.dimension,
                                 lane_enabled=config.semantic.enabled)
            if previous is not None and previous.model_id != writer.model.model_id:
                report.replaced = previous.model_id
            with db:
                for item_id in vectors.gone(db):
                    vectors.remove(db, item_id)
                    report.removed += 1
            report.items = db.execute("SELECT count(*) FROM items").fetchone()[0]
            report.behind = vectors.behind_count(db)
            if progress:
                progress(0, report.behind)
            while True:
                ids = vectors.behind(db, batch)
                if not ids:
                    break
                prepared = writer.prepare_stored(db, ids)
                with db:
                    for item_id, p in zip(ids, prepared):
                        writer.put(db, item_id, p)
                report.embedded += len(ids)
                report.windows += sum(len(p.windows) for p in prepared)
                if progress:
                    progress(report.embedded, report.behind)
            if not config.semantic.enabled:
                report.notes.append("the semantic lane is off: set `[semantic] enabled = true` to search with "
                                    "these vectors")
            return report
