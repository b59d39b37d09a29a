"""The plugin in docs/example-plugin is what a newcomer copies: it must work as written. Its own
tests run here, and it is built as a wheel and installed next to the core in a fresh virtual
environment, where it ingests and searches its made-up sessions with nothing but `jezero.plugin`."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
import zipfile

import pytest

from jz_support import REPO

EXAMPLE = REPO / "docs" / "example-plugin"


def test_the_example_s_own_tests_pass():
    env = {**os.environ, "PYTHONPATH": str(EXAMPLE / "src")}
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--rootdir", str(EXAMPLE),
                           "-c", os.devnull, str(EXAMPLE / "tests")], capture_output=True, text=True, env=env, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_the_example_is_small_enough_to_copy():
    source = (EXAMPLE / "src" / "jezero_connectors_jotter" / "__init__.py").read_text()
    assert len(source.splitlines()) <= 90
    imports = [line for line in source.splitlines() if line.startswith(("import ", "from "))]
    assert all("jezero" not in line or line.startswith("from jezero.plugin import") for line in imports), imports


def _uv(*args: str, cwd=None) -> subprocess.CompletedProcess:
    return subprocess.run(["uv", *args], capture_output=True, text=True, cwd=cwd, timeout=600)


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("uv") is None, reason="uv is not installed")
def test_the_example_as_a_wheel_next_to_the_core_in_a_fresh_environment(tmp_path):
    wheels = tmp_path / "wheels"
    for args in (["--package", "jezero"], [str(EXAMPLE)]):
        built = _uv("build", "--offline", "--wheel", "--out-dir", str(wheels), *args, cwd=REPO)
        assert built.returncode == 0, built.stderr
    # `pip install 'jezero[all]'` brings the first-party plugins.
    (core,) = wheels.glob("jezero-*.whl")
    with zipfile.ZipFile(core) as wheel:
        metadata = wheel.read(next(n for n in wheel.namelist() if n.endswith(".dist-info/METADATA"))).decode()
    for dist in ("jezero-connectors-claude", "jezero-connectors-codex", "jezero-summarizers"):
        assert f"Requires-Dist: {dist} ; extra == 'all'" in metadata
    venv = tmp_path / "venv"
    assert _uv("venv", "-q", "--offline", "--python", sys.executable, str(venv)).returncode == 0
    python = venv / "bin" / "python"
    # The core's dependencies at the versions of the lock; from uv's cache when it has them all.
    constraints = tmp_path / "constraints.txt"
    exported = _uv("export", "--frozen", "--no-hashes", "--no-dev", "--package", "jezero", "--no-emit-workspace",
                   "-q", "-o", str(constraints), cwd=REPO)
    assert exported.returncode == 0, exported.stderr
    install = ["pip", "install", "-q", "--python", str(python), "-c", str(constraints), *map(str, sorted(wheels.glob("*.whl")))]
    done = _uv(*install[:2], "--offline", *install[2:])
    if done.returncode != 0:
        done = _uv(*install)
    if done.returncode != 0:
        pytest.skip(f"cannot install the core's dependencies (offline cache incomplete, no index): {done.stderr[-300:]}")

    jezero = venv / "bin" / "jezero"
    env = {**os.environ, "HOME": str(tmp_path / "home")}
    env.pop("JEZERO_PLUGINS", None)
    listed = json.loads(subprocess.run([str(jezero), "plugins", "--json"], capture_output=True, text=True, env=env,
                                       check=True).stdout)
    assert [p["distribution"] for p in listed] == ["jezero-connectors-jotter"]

    script = textwrap.dedent(f"""
        import json, sys
        from jezero.plugin.testing import Library

        with Library({str(tmp_path / 'library')!r}, "jotter", {{"path": {str(EXAMPLE / 'sessions')!r}}}) as library:
            report = library.run()
            hits = library.search("too many open files")
            decision = library.search("exchange rates Redis")
        print(json.dumps({{"report": report, "hits": hits, "decision": decision,
                          "modules": sorted(m for m in sys.modules if m.startswith("jezero_connectors"))}}))
    """)
    proc = subprocess.run([str(python), "-c", script], capture_output=True, text=True, env=env, cwd=tmp_path, timeout=300)
    assert proc.returncode == 0, proc.stderr
    answer = json.loads(proc.stdout)
    assert answer["report"]["sessions_written"] == 2 and not answer["report"]["error"]
    assert answer["hits"] and "too many open files" in answer["hits"][0]["title"]
    assert answer["decision"] and answer["decision"][0]["session_id"] == "2026-03-09-cache"
    assert answer["modules"] == ["jezero_connectors_jotter"]  # found through its entry point


def test_jezero_up_finds_a_third_party_agent_s_store(register_plugin, isolated_home, monkeypatch):
    monkeypatch.syspath_prepend(str(EXAMPLE / "src"))
    import jezero_connectors_jotter

    from jezero import up

    register_plugin(jezero_connectors_jotter, "jotter-example")
    assert [s for s in up.discover_stores() if s.type == "jotter"] == []
    store = isolated_home / ".jotter" / "sessions"
    store.mkdir(parents=True)
    found = [s for s in up.discover_stores() if s.type == "jotter"]
    assert found == [up.AgentStore("jotter", {"path": str(store)})]
    assert 'name = "jotter-local"\ntype = "jotter"' in up.connectors_toml(found)
