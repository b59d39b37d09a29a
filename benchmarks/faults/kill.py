"""SIGKILL `jezero run` (and resummarize, retag) at random points; after each: integrity, items =
index = messages; at the end one clean run must equal an uninterrupted run: same ids too.
`kill.py ROUNDS SEED run tantivy`: the same with the tantivy engine (its index synced at each run's
end), then status and five searches compared with the uninterrupted library's."""
import sys
from pathlib import Path
HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
sys.path[:0] = [str(HERE), str(REPO / "tests")]
import json, random, signal, subprocess, sys, time, shutil, tempfile
from pathlib import Path
from test_ingest_crash import make_specs, write_all, config
from jz_support import jezero_command
import apsw

def state(lib):
    c = apsw.Connection(str(lib))
    if not c.execute("SELECT count(*) FROM sqlite_master WHERE name='items_fts'").fetchone()[0]:
        assert c.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        c.close(); return [], [], []
    try:
        ok = c.execute("PRAGMA integrity_check").fetchone()[0]
        c.execute("INSERT INTO items_fts(items_fts, rank) VALUES('integrity-check', 1)")
        c.execute("INSERT INTO messages_fts(messages_fts, rank) VALUES('integrity-check', 0)")
        items = c.execute("SELECT id, uid, content_hash, title, summary, project, occurred_at, started_at FROM items ORDER BY id").fetchall()
        fts = c.execute("SELECT count(*) FROM items_fts").fetchone()[0]
        orphans = c.execute("SELECT count(*) FROM messages WHERE item_id NOT IN (SELECT id FROM items)").fetchone()[0]
        bare = c.execute("SELECT count(*) FROM items WHERE id NOT IN (SELECT item_id FROM messages)").fetchone()[0]
        msgs = c.execute("SELECT m.id, m.item_id, m.seq, m.role, m.at, t.text FROM messages m JOIN message_texts t ON t.id=m.id ORDER BY m.id").fetchall()
        mt = c.execute("SELECT count(*) FROM message_texts").fetchone()[0]
        cursors = c.execute("SELECT connector, key, value FROM cursors ORDER BY 1, 2").fetchall()
    finally:
        c.close()
    assert ok == "ok", ok
    assert fts == len(items) and orphans == 0 and bare == 0 and mt == len(msgs), (fts, len(items), orphans, bare, mt, len(msgs))
    return items, msgs, cursors

def main(rounds, seed, cmd, engine=None):
    tmp = Path(tempfile.gettempdir()) / f"jezero-faults-kill-{cmd}-{seed}-{engine}"; shutil.rmtree(tmp, ignore_errors=True); tmp.mkdir(parents=True)
    sessions = tmp / "sessions"; specs = make_specs(60, seed); write_all(sessions, specs)
    victim = config(tmp, sessions, "victim", engine=engine); ref = config(tmp, sessions, "reference", engine=engine)
    rng = random.Random(seed)
    jz = jezero_command()
    if cmd != "run":
        subprocess.run([*jz, "--config", str(victim), "run", "-q"], check=True, capture_output=True)
    kills = 0
    for r in range(rounds):
        args = {"run": ["run", "-q"], "resummarize": ["resummarize"], "retag": ["retag"]}[cmd]
        p = subprocess.Popen([*jz, "--config", str(victim), *args], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        time.sleep(rng.uniform(0.3, 4.0))
        if p.poll() is None:
            p.send_signal(signal.SIGKILL); kills += 1
        p.wait()
        state(tmp / "victim.sqlite3")
    subprocess.run([*jz, "--config", str(victim), "run", "-q"], check=True, capture_output=True)
    subprocess.run([*jz, "--config", str(ref), "run", "-q"], check=True, capture_output=True)
    vi, vm, vc = state(tmp / "victim.sqlite3"); ri, rm, rc = state(tmp / "reference.sqlite3")
    if cmd == "run":
        print("items equal", vi == ri, "messages equal", vm == rm, "cursors equal", vc == rc, len(vi), len(vm))
        if vi != ri:
            for a, b in zip(vi, ri):
                if a != b: print(" first diff", a[:4], "\n           ", b[:4]); break
        if vm != rm:
            for a, b in zip(vm, rm):
                if a != b: print(" first msg diff", a[:5], "\n           ", b[:5]); break
    if engine:  # the engine's index in step after the clean run, and the same answers as the reference's
        said = subprocess.run([*jz, "--config", str(victim), "status"], capture_output=True, text=True).stdout
        print("status:", next((x for x in said.splitlines() if x.startswith("search engine")), "?"))
        same = 0
        for q in ("deploy", "error", "test", "build fix", "the"):
            a, b = (subprocess.run([*jz, "--config", str(c), "search", q, "--json"], capture_output=True, text=True) for c in (victim, ref))
            # (ids and titles: a score's recency part moves with the clock between the two calls)
            ids = [[(x["id"], x.get("title")) for x in json.loads(r.stdout)] if r.returncode == 0 else r.stderr for r in (a, b)]
            same += ids[0] == ids[1] and not a.stderr.strip()
            if a.stderr.strip(): print(" search stderr:", a.stderr.strip()[:300])
        print("searches equal", same, "of 5")
    print(cmd, "kills", kills, "of", rounds)

if __name__ == "__main__":
    main(int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4] if len(sys.argv) > 4 else None)
