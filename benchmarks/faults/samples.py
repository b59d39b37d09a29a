import json, shutil, sys, traceback
from pathlib import Path
from jezero import plugins
from jezero.plugin import ConnectorContext

S = Path(__file__).resolve().parents[2].parent / "shared" / "samples"
STORES = {
    "claude": [S / "claude", S / "newest/claude"],
    "codex": [S / "codex", S / "newest/codex"],
    "gemini": [S / "newest/gemini"],
    "copilot": [S / "newest/copilot"],
    "opencode": [S / "newest/opencode"],
}

def read(ctype, root, cursor=None):
    warnings = []
    conn = plugins.connector_types()[ctype].build({"path": str(root)}, ConnectorContext("fz", warnings.append))
    sessions = list(conn.read(cursor if cursor is not None else {}))
    for s in sessions:
        warnings.extend(s.warnings)
    return sessions, warnings
