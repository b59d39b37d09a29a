"""The serving process's own settings (jezero.server.process): the youngest GC generation's
threshold that `jezero serve` and each of its workers set before they serve."""

from __future__ import annotations

import gc
import json
import os
import subprocess
import sys

import pytest

from jezero.server import process


@pytest.fixture
def thresholds():
    saved = gc.get_threshold()
    yield
    gc.set_threshold(*saved)


def test_tune_gc_raises_the_first_threshold_and_keeps_the_others(thresholds):
    gc.set_threshold(700, 7, 9)
    process.tune_gc()
    assert gc.get_threshold() == (process.GC_FIRST_GENERATION, 7, 9)
    gc.set_threshold(50_000, 7, 9)  # a process that chose more keeps it
    process.tune_gc()
    assert gc.get_threshold() == (50_000, 7, 9)
    gc.set_threshold(0, 7, 9)  # 0: collection switched off by its owner, left so
    process.tune_gc()
    assert gc.get_threshold() == (0, 7, 9)


# The real command line in a subprocess; only the serving loop is replaced by one that reports the
# thresholds the process serves with.
_SERVE = """
import gc, json, sys
import jezero.server
jezero.server.serve_stdio = lambda *a, **k: print(json.dumps(gc.get_threshold()))
from jezero.cli import main
sys.argv = ["jezero", "serve", "--transport", "stdio"]
main()
"""


def test_jezero_serve_serves_with_the_raised_threshold(tmp_path):
    (tmp_path / "config.toml").write_text(f'[storage]\npath = "{tmp_path / "library.sqlite3"}"\n')
    env = {k: v for k, v in os.environ.items() if not k.startswith("JEZERO_")}
    env.update({"JEZERO_CONFIG": str(tmp_path / "config.toml"), "HOME": str(tmp_path)})
    done = subprocess.run([sys.executable, "-c", _SERVE], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    first, *_ = json.loads(done.stdout.strip().splitlines()[-1])
    assert first == process.GC_FIRST_GENERATION


def test_a_worker_process_serves_with_the_raised_threshold(tmp_path, monkeypatch, thresholds):
    from jezero.server import http

    (tmp_path / "config.toml").write_text(f'[storage]\npath = "{tmp_path / "library.sqlite3"}"\n')
    monkeypatch.setenv(http._WORKER_ENV, json.dumps({"config": str(tmp_path / "config.toml"), "host": "127.0.0.1",
                                                      "options": {}, "log_level": "warning"}))
    gc.set_threshold(700, 10, 10)
    http.worker_app()
    assert gc.get_threshold()[0] == process.GC_FIRST_GENERATION
