"""The first generation (TypeScript CLI, April–May 2025): one JSON document per file,
`{"session": {timestamp, id, instructions}, "items": [ResponseItem, ...]}`.

Early TS builds wrote a new file with a new id at every save, each holding the whole
conversation so far, so one conversation left a trail of growing snapshots. A document whose
items begin another document's items is such a snapshot: it is not read on its own, and the
most complete document records it in its cursor entry (`covers`)."""

from __future__ import annotations

import json
from typing import Any

from jezero.plugin import json_text, read_json


def parse_document(data: bytes) -> dict | None:
    try:
        doc = read_json(json_text(data))
    except ValueError:
        return None
    if isinstance(doc, dict) and isinstance(doc.get("items"), list):
        return doc
    return None


def item_prints(doc: dict) -> list[str]:
    return [json.dumps(item, sort_keys=True, separators=(",", ":")) for item in doc["items"]]


def supersessions(prints: dict[str, list[str]], order: dict[str, Any]) -> dict[str, str]:
    """Map each snapshot to the most complete document whose items start with its items
    (ties between identical documents go to the greater `order`)."""
    groups: dict[str, list[str]] = {}
    for key, items in prints.items():
        if items:
            groups.setdefault(items[0], []).append(key)
    result: dict[str, str] = {}
    for keys in groups.values():
        if len(keys) < 2:
            continue
        best_first = sorted(keys, key=lambda k: (len(prints[k]), order[k]), reverse=True)
        for key in keys:
            mine = prints[key]
            for other in best_first:
                if other == key:
                    continue
                theirs = prints[other]
                longer = len(theirs) > len(mine) or (len(theirs) == len(mine) and order[other] > order[key])
                if longer and theirs[: len(mine)] == mine:
                    result[key] = other
                    break
    return result
