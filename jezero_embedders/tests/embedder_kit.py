"""What the embedder's tests share (a module name no other distribution's tests use)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

# The 4,000 most frequent vocabulary ids (about 3,000 common words and the single characters):
# a prepare of about 12 s CPU instead of 75 s for all 29,523 tokens; the derivation
# is the same code.
TEST_VOCABULARY = 4000

# Runs in a fresh interpreter with every socket refused and the hub switched off, so a prepare or
# an embed that reached for the network would fail, and reports which modules it imported.
_OFFLINE_RUN = r"""
import json, socket, sys
def refuse(*args, **kwargs):
    raise OSError("network touched")
socket.socket.connect = refuse
socket.create_connection = refuse
from jezero import plugins
kind = plugins.embedder_types()[sys.argv[3]]
options = json.loads(sys.argv[1])
line = kind.prepare(options) if sys.argv[2] == "prepare" else ""
vectors = kind.build(options).embed(["the house cost a lot of money"])
print(json.dumps({"line": line, "shape": list(vectors.shape),
                  "modules": sorted(m for m in ("huggingface_hub", "torch", "transformers", "requests", "httpx")
                                    if m in sys.modules)}))
"""


def offline_run(options: dict, what: str, embedder: str = "minilm-static") -> dict:
    env = dict(os.environ, HF_HUB_OFFLINE="1", JEZERO_PLUGINS="jezero_embedders")
    done = subprocess.run([sys.executable, "-c", _OFFLINE_RUN, json.dumps(options), what, embedder],
                          capture_output=True, text=True, env=env, timeout=1800)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])
