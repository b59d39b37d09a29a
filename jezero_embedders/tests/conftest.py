from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

if getattr(sys.modules.get("jezero_embedders"), "__file__", None) is None:
    # The suite's "core alone" run: this distribution is not installed, so nothing here applies.
    collect_ignore_glob = ["test_*.py"]

# The 4,000 most frequent vocabulary ids (about 3,000 common words and the single characters):
# a prepare of about 9 s CPU instead of about a minute for all 29,523 tokens; the derivation
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
kind = plugins.embedder_types()["minilm-static"]
options = json.loads(sys.argv[1])
line = kind.prepare(options) if sys.argv[2] == "prepare" else ""
vectors = kind.build(options).embed(["the house cost a lot of money"])
print(json.dumps({"line": line, "shape": list(vectors.shape),
                  "modules": sorted(m for m in ("huggingface_hub", "torch", "transformers", "requests", "httpx")
                                    if m in sys.modules)}))
"""


def offline_run(options: dict, what: str) -> dict:
    env = dict(os.environ, HF_HUB_OFFLINE="1", JEZERO_PLUGINS="jezero_embedders")
    done = subprocess.run([sys.executable, "-c", _OFFLINE_RUN, json.dumps(options), what],
                          capture_output=True, text=True, env=env, timeout=1800)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="session")
def source_model():
    from jezero_embedders import source

    if source.installed_version() is None:
        pytest.skip(f"the source model is not installed ({source.INSTALL})")
    return source.find()


@pytest.fixture(scope="session")
def prepared(source_model, tmp_path_factory) -> dict:
    """One prepare for the session, through the plugin host in a fresh offline interpreter:
    {"options": ..., "report": what the run printed}."""
    options = {"cache_dir": str(tmp_path_factory.mktemp("embedder-cache")), "vocabulary": TEST_VOCABULARY}
    return {"options": options, "report": offline_run(options, "prepare")}


@pytest.fixture(scope="session")
def embedder(prepared):
    from jezero import plugins

    return plugins.embedder_types()["minilm-static"].build(prepared["options"])
