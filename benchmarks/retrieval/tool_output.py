"""Tool output that real sessions are full of: test runs, listings, logs, install and build output.

Every generator takes a `random.Random`, so the data set is the same on every run. The output is
meant to look like what the tools print, with the shared vocabulary (passed, error, warning, src,
tests, install...) that makes raw-transcript BM25 noisy in the way it is noisy on real stores.
"""

from __future__ import annotations

import random
from datetime import datetime, timedelta

_HEX = "0123456789abcdef"


def sha(rng: random.Random, n: int = 7) -> str:
    return "".join(rng.choice(_HEX) for _ in range(n))


# -- tests ------------------------------------------------------------------------------------------


def pytest_run(rng: random.Random, files: dict[str, int], *, failures: list[tuple[str, str]] = (),
               python: str = "3.11.9", plugins: str = "anyio-4.4.0, cov-5.0.0, django-4.8.0",
               root: str = "/app", seconds: float | None = None) -> str:
    """A pytest run: header, one progress line per file, the failures' tracebacks, the summary.

    `files` maps a test file to its number of tests; `failures` are (node id, traceback body)."""
    total = sum(files.values())
    failed_files = {f.split("::")[0] for f, _ in failures}
    lines = [
        "============================= test session starts ==============================",
        f"platform linux -- Python {python}, pytest-8.2.2, pluggy-1.5.0",
        f"rootdir: {root}",
        "configfile: pyproject.toml",
        f"plugins: {plugins}",
        f"collected {total} items",
        "",
    ]
    done = 0
    for f, n in files.items():
        done += n
        marks = ["."] * n
        if f in failed_files:
            k = sum(1 for x, _ in failures if x.split("::")[0] == f)
            for i in rng.sample(range(n), min(k, n)):
                marks[i] = "F"
        if rng.random() < 0.15 and n > 3:
            marks[rng.randrange(n)] = "s"
        pct = int(100 * done / total) if total else 100
        lines.append(f"{f} {''.join(marks)}{' ' * max(1, 50 - len(f) - n)}[{pct:3d}%]")
    if failures:
        lines += ["", "=================================== FAILURES ==================================="]
        for node, body in failures:
            name = node.split("::")[-1]
            lines += [f"{'_' * 20} {name} {'_' * 20}", "", body.rstrip(), ""]
        lines.append("=========================== short test summary info ============================")
        for node, body in failures:
            last = [ln for ln in body.strip().splitlines() if ln.startswith("E ")]
            lines.append(f"FAILED {node} - {last[0][1:].strip() if last else 'AssertionError'}")
    secs = seconds if seconds is not None else round(rng.uniform(2, 40), 2)
    passed = total - len(failures)
    summary = f"{len(failures)} failed, {passed} passed" if failures else f"{passed} passed"
    if rng.random() < 0.5:
        summary += f", {rng.randint(1, 9)} warnings"
    bar = "=" * 24
    lines.append(f"{bar} {summary} in {secs:.2f}s {bar}")
    return "\n".join(lines)


def jest_run(rng: random.Random, suites: list[str], *, failing: list[tuple[str, str]] = ()) -> str:
    out = []
    failing_names = {s for s, _ in failing}
    for s in suites:
        status = "FAIL" if s in failing_names else "PASS"
        out.append(f"{status} {s} ({rng.uniform(0.3, 6):.3f} s)")
    for s, body in failing:
        out += ["", f"  ● {s.split('/')[-1].split('.')[0]} › {body.splitlines()[0]}", ""]
        out += ["    " + ln for ln in body.splitlines()[1:]]
    tests = sum(rng.randint(3, 14) for _ in suites)
    nfail = len(failing)
    out += ["",
            f"Test Suites: {f'{nfail} failed, ' if nfail else ''}"
            f"{len(suites) - nfail} passed, {len(suites)} total",
            f"Tests:       {f'{nfail} failed, ' if nfail else ''}{tests - nfail} passed, {tests} total",
            "Snapshots:   0 total", f"Time:        {rng.uniform(4, 30):.3f} s", "Ran all test suites."]
    return "\n".join(out)


def cargo_test(rng: random.Random, crate: str, tests: list[str], *, failures: list[tuple[str, str]] = (),
               release: bool = False) -> str:
    prof = "release [optimized]" if release else "test [unoptimized + debuginfo]"
    out = [f"   Compiling {crate} v0.3.0 (/home/dev/src/plume/{crate})",
           f"    Finished `{'release' if release else 'test'}` profile [{prof.split('[')[1]} target(s) in "
           f"{rng.uniform(3, 40):.2f}s",
           f"     Running unittests src/lib.rs (target/{'release' if release else 'debug'}/deps/{crate}-{sha(rng, 16)})",
           "", f"running {len(tests)} tests"]
    failed = {f for f, _ in failures}
    for t in tests:
        out.append(f"test {t} ... {'FAILED' if t in failed else 'ok'}")
    if failures:
        out += ["", "failures:", ""]
        for t, body in failures:
            out += [f"---- {t} stdout ----", body.rstrip(), ""]
        out += ["failures:"] + [f"    {t}" for t, _ in failures]
    res = "FAILED" if failures else "ok"
    out += ["", f"test result: {res}. {len(tests) - len(failures)} passed; {len(failures)} failed; 0 ignored; "
                f"0 measured; 0 filtered out; finished in {rng.uniform(0.1, 9):.2f}s"]
    return "\n".join(out)


# -- listings -----------------------------------------------------------------------------------------


def ls_la(rng: random.Random, names: list[str], owner: str = "dev") -> str:
    month = rng.choice(["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"])
    out = [f"total {rng.randint(40, 400)}",
           f"drwxr-xr-x  {rng.randint(5, 20)} {owner} {owner}  4096 {month} {rng.randint(1, 28):2d} 10:12 .",
           f"drwxr-xr-x  {rng.randint(5, 30)} {owner} {owner}  4096 {month} {rng.randint(1, 28):2d} 09:40 .."]
    for n in names:
        is_dir = n.endswith("/")
        size = 4096 if is_dir else rng.randint(80, 60000)
        mode = "drwxr-xr-x" if is_dir else rng.choice(["-rw-r--r--", "-rw-r--r--", "-rwxr-xr-x"])
        out.append(f"{mode}  {rng.randint(1, 9)} {owner} {owner} {size:6d} {month} {rng.randint(1, 28):2d} "
                   f"{rng.randint(0, 23):02d}:{rng.randint(0, 59):02d} {n.rstrip('/')}")
    return "\n".join(out)


def find_files(rng: random.Random, root: str, dirs: list[str], exts: list[str], n: int, stems: list[str]) -> str:
    seen = set()
    out = []
    while len(out) < n:
        p = f"{root}/{rng.choice(dirs)}/{rng.choice(stems)}{rng.choice(['', '_utils', '_test', 's', '_v2'])}.{rng.choice(exts)}"
        if p not in seen:
            seen.add(p)
            out.append(p)
    return "\n".join(sorted(out))


def grep_hits(rng: random.Random, pattern: str, files: list[str], snippets: list[str], n: int) -> str:
    out = []
    for _ in range(n):
        f = rng.choice(files)
        s = rng.choice(snippets)
        out.append(f"{f}:{rng.randint(3, 400)}:    {s}")
    return "\n".join(out)


def git_log(rng: random.Random, subjects: list[str], n: int, start: datetime) -> str:
    out = []
    t = start
    for _ in range(n):
        t -= timedelta(hours=rng.randint(2, 60))
        out.append(f"{sha(rng)} {rng.choice(subjects)} ({t:%Y-%m-%d})")
    return "\n".join(out)


def git_diff_stat(rng: random.Random, files: list[str]) -> str:
    out = []
    ins = dels = 0
    for f in files:
        a, d = rng.randint(1, 120), rng.randint(0, 60)
        ins += a
        dels += d
        out.append(f" {f:<50} | {a + d:3d} {'+' * min(a // 4 + 1, 30)}{'-' * min(d // 4, 20)}")
    out.append(f" {len(files)} files changed, {ins} insertions(+), {dels} deletions(-)")
    return "\n".join(out)


def git_status(branch: str, modified: list[str], untracked: list[str] = ()) -> str:
    out = [f"On branch {branch}", "Changes not staged for commit:",
           '  (use "git add <file>..." to update what will be committed)',
           '  (use "git restore <file>..." to discard changes in working directory)']
    out += [f"\tmodified:   {m}" for m in modified]
    if untracked:
        out += ["", "Untracked files:", '  (use "git add <file>..." to include in what will be committed)']
        out += [f"\t{u}" for u in untracked]
    out += ["", 'no changes added to commit (use "git add" and/or "git commit -a")']
    return "\n".join(out)


# -- installs and builds ------------------------------------------------------------------------------


def pip_install(rng: random.Random, pkgs: list[tuple[str, str]]) -> str:
    out = []
    for name, ver in pkgs:
        out.append(f"Collecting {name}=={ver}")
        out.append(f"  Downloading {name.replace('-', '_')}-{ver}-py3-none-any.whl ({rng.randint(20, 900)} kB)")
    out.append("Installing collected packages: " + ", ".join(n for n, _ in pkgs))
    out.append("Successfully installed " + " ".join(f"{n}-{v}" for n, v in pkgs))
    return "\n".join(out)


def npm_install(rng: random.Random, added: int, warn: list[str] = ()) -> str:
    out = [f"npm warn deprecated {w}" for w in warn]
    out += ["", f"added {added} packages, removed {rng.randint(0, 30)} packages, changed {rng.randint(0, 80)} packages, "
                f"and audited {added + rng.randint(200, 1400)} packages in {rng.randint(8, 90)}s", "",
            f"{rng.randint(80, 260)} packages are looking for funding", "  run `npm fund` for details", "",
            f"{rng.randint(0, 9)} vulnerabilities ({rng.randint(0, 5)} moderate, {rng.randint(0, 3)} high)", "",
            "To address all issues, run:", "  npm audit fix"]
    return "\n".join(out)


def docker_build(rng: random.Random, steps: list[str], tag: str, tail: str | None = None) -> str:
    out = ["#0 building with \"default\" instance using docker driver", "",
           "#1 [internal] load build definition from Dockerfile", f"#1 transferring dockerfile: {rng.randint(400, 3000)}B done",
           "#1 DONE 0.0s", "", "#2 [internal] load metadata for docker.io/library/python:3.11-slim", "#2 DONE 1.2s"]
    for i, s in enumerate(steps, start=3):
        out += ["", f"#{i} [{i - 2}/{len(steps)}] {s}"]
        if s.startswith("RUN"):
            out += [f"#{i} {rng.uniform(0.1, 30):.3f} " + rng.choice([
                "Reading package lists...", "Building dependency tree...", "Collecting wheel", "Unpacking ...",
                "Setting up libpq5:amd64 (15.6-0+deb12u1) ...", "Processing triggers for libc-bin (2.36-9+deb12u7) ...",
                "Successfully installed", "Removing intermediate container"]) for _ in range(rng.randint(2, 7))]
        out.append(f"#{i} DONE {rng.uniform(0, 40):.1f}s")
    if tail:
        out += ["", tail]
    else:
        out += ["", f"#{len(steps) + 3} exporting to image", f"#{len(steps) + 3} naming to docker.io/library/{tag} done",
                f"#{len(steps) + 3} DONE {rng.uniform(0.5, 5):.1f}s"]
    return "\n".join(out)


def cargo_build(rng: random.Random, deps: list[str], crate: str, warnings: list[str] = (), tail: str | None = None) -> str:
    out = [f"   Compiling {d} v{rng.randint(0, 2)}.{rng.randint(0, 30)}.{rng.randint(0, 12)}" for d in deps]
    for w in warnings:
        out += [f"warning: {w}", f"  --> src/{rng.choice(['lower', 'typeck', 'codegen', 'parse'])}.rs:{rng.randint(10, 900)}:{rng.randint(1, 40)}",
                "   |", ""]
    out.append(f"   Compiling {crate} v0.3.0 (/home/dev/src/plume/{crate})")
    out.append(tail or f"    Finished `dev` profile [unoptimized + debuginfo] target(s) in {rng.uniform(4, 90):.2f}s")
    return "\n".join(out)


def gradle_log(rng: random.Random, tasks: list[str], tail: str) -> str:
    out = ["Starting a Gradle Daemon (subsequent builds will be faster)", "",
           "> Configure project :app", "WARNING: The option setting 'android.enableJetifier=true' is deprecated."]
    out += [f"> Task :{t}{rng.choice(['', ' UP-TO-DATE', ' NO-SOURCE', ' FROM-CACHE'])}" for t in tasks]
    out += ["", tail]
    return "\n".join(out)


def terraform_plan(rng: random.Random, changes: list[tuple[str, str]], unchanged: int = 0) -> str:
    out = [f"{r}: Refreshing state... [id={rng.randint(1000000, 9999999)}]" for r, _ in changes]
    out += ["", "Terraform used the selected providers to generate the following execution plan. Resource",
            "actions are indicated with the following symbols:", "  + create", "  ~ update in-place", "  - destroy", "",
            "Terraform will perform the following actions:", ""]
    adds = upd = dels = 0
    for r, action in changes:
        sym = {"create": "+", "update": "~", "destroy": "-"}[action]
        adds += action == "create"
        upd += action == "update"
        dels += action == "destroy"
        out += [f"  # {r} will be {'created' if action == 'create' else 'updated in-place' if action == 'update' else 'destroyed'}",
                f"  {sym} resource \"{r.split('.')[0]}\" \"{r.split('.')[1]}\" {{",
                f"      {sym} id     = (known after apply)" if action == "create" else f"        id     = \"{rng.randint(10**6, 10**7)}\"",
                f"      {sym} labels = {{ \"env\" = \"prod\" }}", "    }", ""]
    out.append(f"Plan: {adds} to add, {upd} to change, {dels} to destroy.")
    return "\n".join(out)


# -- kubernetes and services -------------------------------------------------------------------------------


def kubectl_pods(rng: random.Random, pods: list[str], namespace_col: bool = False, bad: dict[str, str] | None = None) -> str:
    bad = bad or {}
    head = ("NAMESPACE     " if namespace_col else "") + "NAME                                      READY   STATUS             RESTARTS        AGE"
    out = [head]
    for p in pods:
        ns, _, name = p.partition("/") if namespace_col else ("", "", p)
        full = f"{name}-{sha(rng, 9)}-{sha(rng, 5)}"
        status = bad.get(name, "Running")
        restarts = rng.randint(6, 40) if status != "Running" else rng.choice([0, 0, 0, 1, 2])
        ready = "0/1" if status != "Running" else "1/1"
        row = f"{full:<42}{ready:<8}{status:<19}{restarts:<16}{rng.randint(1, 90)}d"
        out.append((f"{ns:<14}" if namespace_col else "") + row)
    return "\n".join(out)


def kubectl_events(rng: random.Random, rows: list[tuple[str, str, str]]) -> str:
    out = ["LAST SEEN   TYPE      REASON              OBJECT                                MESSAGE"]
    for kind, reason, msg in rows:
        out.append(f"{rng.randint(1, 59)}m{'':<8}{kind:<10}{reason:<20}{'pod/' + sha(rng, 10):<38}{msg}")
    return "\n".join(out)


def access_log(rng: random.Random, paths: list[str], n: int, start: datetime, slow: float = 0.0) -> str:
    out = []
    t = start
    for _ in range(n):
        t += timedelta(seconds=rng.randint(0, 3))
        code = rng.choices([200, 200, 200, 301, 304, 404, 500, 502], [40, 30, 20, 3, 4, 3, 1, 1])[0]
        rt = rng.uniform(0.005, 0.4) + (rng.uniform(0, slow) if slow else 0)
        out.append(f"10.0.{rng.randint(0, 9)}.{rng.randint(2, 250)} - - [{t:%d/%b/%Y:%H:%M:%S} +0000] "
                   f"\"GET {rng.choice(paths)} HTTP/1.1\" {code} {rng.randint(200, 90000)} \"-\" "
                   f"\"Mozilla/5.0\" rt={rt:.3f}")
    return "\n".join(out)


def app_log(rng: random.Random, logger: str, templates: list[str], n: int, start: datetime, level_mix=("INFO",)) -> str:
    out = []
    t = start
    for _ in range(n):
        t += timedelta(milliseconds=rng.randint(5, 4000))
        msg = rng.choice(templates).format(n=rng.randint(1, 9999), id=sha(rng, 8), ms=rng.randint(2, 900))
        out.append(f"{t:%Y-%m-%d %H:%M:%S},{t.microsecond // 1000:03d} {rng.choice(level_mix):<7} [{logger}] {msg}")
    return "\n".join(out)


def locust_table(rng: random.Random, endpoints: list[tuple[str, int]], users: int) -> str:
    out = ["Type     Name                                                    # reqs      # fails |    Avg     Min     Max    Med |   req/s  failures/s",
           "-" * 120]
    total = 0
    for name, base in endpoints:
        reqs = rng.randint(2000, 40000)
        total += reqs
        fails = rng.randint(0, reqs // 50)
        out.append(f"GET      {name:<56}{reqs:>7} {fails:>6}({100 * fails / reqs:.2f}%) | {base:>6} {base // 10:>6} "
                   f"{base * rng.randint(4, 12):>7} {int(base * 0.9):>6} | {reqs / 600:>7.2f} {fails / 600:>10.2f}")
    out += ["-" * 120, f"         Aggregated{'':<47}{total:>7}  | users={users}",
            "", "Response time percentiles (approximated)"]
    out.append("Type     Name                          50%    66%    75%    80%    90%    95%    98%    99%  99.9%   100%")
    for name, base in endpoints:
        ps = [int(base * f) for f in (0.9, 1.1, 1.3, 1.5, 2.0, 2.6, 3.4, 4.2, 6.0, 9.0)]
        out.append(f"GET      {name[:28]:<30}" + " ".join(f"{p:>6}" for p in ps))
    return "\n".join(out)


def source_file(rng: random.Random, lines: list[str], pad: int = 0, filler: list[str] = ()) -> str:
    """A `cat -n` style view of a file: the given lines, optionally padded with filler code."""
    body = list(lines)
    for _ in range(pad):
        body.insert(rng.randrange(len(body) + 1), rng.choice(filler) if filler else "")
    return "\n".join(f"{i:6d}\t{ln}" for i, ln in enumerate(body, start=1))


def csv_rows(rng: random.Random, header: list[str], n: int, gens: list) -> str:
    out = [",".join(header)]
    for _ in range(n):
        out.append(",".join(str(g(rng)) for g in gens))
    return "\n".join(out)
