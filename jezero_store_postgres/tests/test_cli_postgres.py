"""The postgres backend end to end on a real server: `jezero init` and `jezero run` ingest the demo
sessions through the real connectors into PostgreSQL, then `jezero search / later / timeline /
show` and an MCP client over stdio read them back, as they read a SQLite library."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import anyio
import pytest
from mcp import Client, StdioServerParameters

from jezero import plugins
from jezero.demo import build as build_demo

URL_ENV = "JEZERO_TEST_DATABASE_URL"


@pytest.fixture
def anyio_backend():
    return "asyncio"


def _env(root, url):
    e = {k: v for k, v in os.environ.items() if not k.startswith(("JEZERO_", "XDG_"))}
    e.update({"JEZERO_CONFIG": str(root / "config.toml"), URL_ENV: url, "HOME": str(root / "home"),
              "XDG_CONFIG_HOME": str(root / "xdg-config"), "XDG_DATA_HOME": str(root / "xdg-data"),
              "XDG_CACHE_HOME": str(root / "xdg-cache"), "XDG_STATE_HOME": str(root / "xdg-state"),
              "COLUMNS": "200", "NO_COLOR": "1"})
    return e


def write_config(root, written, *, extra: str = "") -> None:
    def inline(opts: dict) -> str:
        return "{ " + ", ".join(f"{k} = {json.dumps(v)}" for k, v in opts.items()) + " }"

    connectors = "".join(f'\n[[connectors]]\nname = "{name}-demo"\ntype = "{name}"\noptions = {inline(opts)}\n'
                         for name, opts in written)
    (root / "config.toml").write_text(f'[storage]\nbackend = "postgres"\nurl_env = "{URL_ENV}"\n\n'
                                      f'[ingest]\nsettle_minutes = 0\n{extra}{connectors}')


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    """The demo sessions in their agents' formats, a config for them on a new PostgreSQL database,
    `jezero init` and one `jezero run` (the tests below read what it wrote)."""
    import pg_support

    url = pg_support.fresh_database()
    root = tmp_path_factory.mktemp("pgdemo")
    written = build_demo(root / "sessions", plugins.connector_types())
    if not written:
        pytest.skip("no connector distribution with a demo writer is installed")
    write_config(root, written)
    d = {"root": root, "env": _env(root, url), "url": url}
    d["init"] = json.loads(jezero(d, "init", "--json").stdout)
    d["run"] = jezero(d, "run")
    return d


def jezero(demo, *args, check=True):
    proc = subprocess.run([sys.executable, "-m", "jezero.cli", *args], env=demo["env"], capture_output=True,
                          text=True, timeout=180)
    if check:
        assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc


def test_run_ingests_into_postgres_and_the_cli_reads_it(demo):
    init = demo["init"]
    assert init["backend"] == "postgres" and init["schema_version"] >= 1
    assert URL_ENV in init["library"] and "postgresql://" not in init["library"]  # never the string itself

    import psycopg

    with psycopg.connect(demo["url"]) as conn:
        items = conn.execute("SELECT count(*) FROM items").fetchone()[0]
        searchable = conn.execute("SELECT count(*) FROM items_search").fetchone()[0]
        messages = conn.execute("SELECT count(*) FROM messages").fetchone()[0]
        cursors = conn.execute("SELECT count(*) FROM cursors").fetchone()[0]
        runs = conn.execute("SELECT count(*) FROM connector_state WHERE last_success_at IS NOT NULL").fetchone()[0]
    assert items >= 8 and searchable == items and messages > items and cursors >= 1 and runs >= 1

    hits = json.loads(jezero(demo, "search", "too many clients", "--json").stdout)
    assert hits and "pgbouncer" in (hits[0]["title"] + hits[0]["summary"]).lower()
    assert {"id", "title", "summary", "project", "source", "occurred_at", "score"} <= set(hits[0])
    # A fragment matches inside a word, as FTS5's trigram index does; diacritics are folded.
    frag = json.loads(jezero(demo, "search", "bounc", "--json").stdout)
    assert hits[0]["id"] in [h["id"] for h in frag]
    assert json.loads(jezero(demo, "search", "facturacion", "--json").stdout)  # "facturación" in the text

    shop = json.loads(jezero(demo, "search", "analytics script", "--project", "shop", "--json").stdout)
    assert shop and all(h["project"] == "shop" for h in shop)
    first = min(shop, key=lambda h: h["occurred_at"])
    later = json.loads(jezero(demo, "later", str(first["id"]), "analytics", "--json").stdout)
    assert later["items"] and all(h["occurred_at"] >= first["occurred_at"] for h in later["items"])
    assert first["id"] not in [h["id"] for h in later["items"]]

    line = json.loads(jezero(demo, "timeline", "--project", "shop", "--json").stdout)
    assert [h["occurred_at"] for h in line] == sorted((h["occurred_at"] for h in line), reverse=True)
    assert {h["id"] for h in shop} <= {h["id"] for h in line}

    shown = json.loads(jezero(demo, "show", str(first["id"]), "--original", "--json").stdout)
    assert shown["id"] == first["id"] and shown["original"] and isinstance(shown["atoms"], list)
    missing = jezero(demo, "show", "999999", check=False)
    assert missing.returncode == 1 and "999999" in missing.stderr

    # A second run finds nothing new and writes nothing twice.
    jezero(demo, "run")
    with psycopg.connect(demo["url"]) as conn:
        assert conn.execute("SELECT count(*) FROM items").fetchone()[0] == items


def test_an_unset_connection_variable_is_a_clear_error(demo):
    env = {k: v for k, v in demo["env"].items() if k != URL_ENV}
    proc = subprocess.run([sys.executable, "-m", "jezero.cli", "search", "anything"], env=env, capture_output=True,
                          text=True, timeout=60)
    assert proc.returncode == 1 and URL_ENV in proc.stderr and "Traceback" not in proc.stderr


@pytest.mark.anyio
async def test_mcp_over_stdio_reads_the_postgres_library(demo):
    params = StdioServerParameters(command=sys.executable, args=["-m", "jezero.cli", "serve", "--transport", "stdio"],
                                   env=demo["env"])
    with anyio.fail_after(90):
        async with Client(params) as client:
            async def call(tool, **args):
                result = await client.call_tool(tool, args)
                assert not result.is_error, result.content[0].text
                return result.structured_content

            found = (await call("search", query="docker system prune"))["items"]
            assert found and "enospc" in (found[0]["title"] + found[0]["summary"]).lower()
            item = await call("get_item", item_id=found[0]["id"])
            assert item["project"] == found[0]["project"]
            line = (await call("timeline", project=found[0]["project"]))["items"]
            assert found[0]["id"] in [h["id"] for h in line]
            assert (await call("later", item_id=found[0]["id"]))["items"] is not None
            names = {s["name"] for s in (await call("catalog"))["sources"]}
            assert found[0]["source"] in names
            missing = await client.call_tool("get_item", {"item_id": 999999})
            assert missing.is_error and "Traceback" not in missing.content[0].text


def test_one_run_at_a_time_across_processes(demo, monkeypatch):
    """The run lock is PostgreSQL's (an advisory lock): a `jezero run` in another process, on any
    machine, is refused while one holds it, and runs once it is released."""
    from jezero import config as config_mod
    from jezero.store import backends

    monkeypatch.setenv(URL_ENV, demo["url"])
    cfg = config_mod.load(demo["root"] / "config.toml")
    with backends.run_lock(cfg):
        refused = jezero(demo, "run", check=False)
        assert refused.returncode == 3 and "run lock" in refused.stderr, refused.stderr
        with pytest.raises(backends.RunLocked):  # a second holder in this process too (its own session)
            with backends.run_lock(cfg):
                pass
    jezero(demo, "run")  # released: runs (and finds nothing new)


def test_readers_use_the_replica_when_one_is_named(demo, tmp_path):
    """With replica_url_env set, search reads from it: here the primary's variable names a server
    that does not exist, and search still answers from the "replica" (the test's database)."""
    config = (demo["root"] / "config.toml").read_text().replace(
        f'url_env = "{URL_ENV}"\n', f'url_env = "{URL_ENV}"\nreplica_url_env = "JEZERO_TEST_REPLICA_URL"\n')
    (tmp_path / "config.toml").write_text(config)
    env = {**demo["env"], "JEZERO_CONFIG": str(tmp_path / "config.toml"), "JEZERO_TEST_REPLICA_URL": demo["url"],
           URL_ENV: "postgresql://nobody@127.0.0.1:1/none"}
    proc = subprocess.run([sys.executable, "-m", "jezero.cli", "search", "docker system prune", "--json"], env=env,
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)
    ran = subprocess.run([sys.executable, "-m", "jezero.cli", "run"], env=env, capture_output=True, text=True,
                         timeout=60)
    assert ran.returncode != 0 and "cannot connect" in ran.stderr  # writers never use the replica
