"""Every key of every config section given a hostile value (a text, -1, 0, a huge number, inf,
-inf, nan, a list, a table, a boolean), and an unknown key in each section: `check-config`, then,
for what it passes, `run`, `status`, `health`, `search`, `recall` through the real CLI over a
made-up Claude store. Prints each case where a command wrote a traceback, or check-config
passed a config that a command then failed on with exit code other than 0/1.

    uv run --locked python benchmarks/faults/configs.py [SECTION...]"""
import re
import subprocess
import sys
import tempfile
from datetime import datetime, timedelta, timezone
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parents[1] / "tests")]
from jz_support import jezero_command  # noqa: E402

from jezero import config as C  # noqa: E402

VALUES = ['"x"', "-1", "0", "1e308", "inf", "-inf", "nan", "9223372036854775807", "[]", "{}", "true", '""']
SECTIONS = {"storage": C.StorageConfig, "search": C.SearchConfig, "summarizer": C.SummarizerConfig, "ingest": C.IngestConfig,
            "projects": C.ProjectsConfig, "server": C.ServerConfig, "inbox": C.InboxConfig, "semantic": C.SemanticConfig}
ARRAYS = {"connectors": C.ConnectorConfig, "clients": C.ClientConfig}


def main(only):
    from jezero.demo import SessionSpec, Turn
    from jezero_connectors_claude.demo import write_claude

    tmp = Path(tempfile.mkdtemp(prefix="jezero-faults-configs-"))
    now = datetime.now(timezone.utc)
    for i in range(3):
        write_claude(tmp / "projects", SessionSpec("claude", "/home/dev/src/shop", now - timedelta(days=i + 1), [
            Turn("user", f"why does invoice {i} rounding fail"), Turn("assistant", "fixed the rounding")]))
    base = {"storage": {"path": f'"{tmp / "library.sqlite3"}"'}, "ingest": {"settle_minutes": "0"}, "summarizer": {"name": '"offline"'}}
    connector = {"name": '"claude"', "type": '"claude"', "options": f'{{ path = "{tmp / "projects"}" }}'}
    client = {"name": '"laptop"', "key_sha256": '"' + "a" * 64 + '"'}
    cases = []
    for section, model in SECTIONS.items():
        if only and section not in only:
            continue
        for key in [*model.model_fields, "unknown_key"]:
            for value in VALUES if key != "unknown_key" else ['"x"']:
                cases.append((section, key, value))
    for section, model in ARRAYS.items():
        if only and section not in only:
            continue
        for key in [*model.model_fields, "unknown_key"]:
            for value in VALUES if key != "unknown_key" else ['"x"']:
                cases.append((section, key, value))
    jz = jezero_command()
    bad = 0
    for n, (section, key, value) in enumerate(cases):
        sections = {s: dict(v) for s, v in base.items()}
        conn, cli = dict(connector), dict(client)
        if section in SECTIONS:
            sections.setdefault(section, {})[key] = value
        elif section == "connectors":
            conn[key] = value
        else:
            cli[key] = value
        text = "".join(f"[{s}]\n" + "".join(f"{k} = {v}\n" for k, v in kv.items()) for s, kv in sections.items())
        text += "[[connectors]]\n" + "".join(f"{k} = {v}\n" for k, v in conn.items())
        if section == "clients":
            text += "[[clients]]\n" + "".join(f"{k} = {v}\n" for k, v in cli.items())
        path = tmp / "config.toml"
        path.write_text(text)
        (tmp / "library.sqlite3").unlink(missing_ok=True)
        checked = subprocess.run([*jz, "--config", str(path), "check-config"], capture_output=True, text=True, timeout=120)
        out = []
        if "Traceback" in checked.stderr:
            out.append(("check-config", checked.returncode, checked.stderr.strip().splitlines()[-1]))
        if checked.returncode == 0:
            for args in (["run", "-q"], ["status"], ["health"], ["search", "rounding"], ["recall", "rounding"]):
                r = subprocess.run([*jz, "--config", str(path), *args], capture_output=True, text=True, timeout=300)
                # (a run reports a connector's exception in its output, not as a traceback)
                raised = re.search(r"\b[A-Z][A-Za-z]+(Error|Exception)\b: .*", r.stdout + r.stderr)
                if "Traceback" in r.stderr or r.returncode not in (0, 1) or raised:
                    out.append((args[0], r.returncode, raised.group(0)[:300] if raised else (r.stderr.strip().splitlines() or ["?"])[-1][:300]))
        if out:
            bad += 1
            print(f"{section}.{key} = {value}: check-config rc {checked.returncode}")
            for what, rc, line in out:
                print(f"    {what}: rc {rc}: {line}")
        sys.stdout.flush()
    print(f"{len(cases)} cases, {bad} with a traceback or a failing command after check-config passed")


if __name__ == "__main__":
    main(sys.argv[1:])
