"""Synthetic but realistic libraries for the search benchmark.

Every text field is drawn from one Zipf-distributed vocabulary (s = 1.07, about 20,000 words).
The default ("dev") has English function words and everyday dev words at the top, then a few
hundred real tool, library and file names, then generated identifiers (snake_case, camelCase,
file paths, error codes) in the long tail, as agents' summaries contain them. "random" is the
vocabulary of the first measurements in notes/dependencies.md: random letter strings. An item is ~1 KB of indexed text
(title 7 words, summary 40, questions 22, atoms 55, plus the project), spread over several
sources and projects and dated over two years. Everything is seeded: the same arguments give
the same library byte for byte (apart from the ingestion timestamps).
"""

from __future__ import annotations

import bisect
import itertools
import random
from datetime import datetime, timedelta, timezone

from jezero.store import ItemRecord, Store

# The head of the distribution: what makes up most running text.
COMMON = """
the to and of a in is for it on that with this was be as are at by not or from have an but
we can so if all will use when which its also new now then one run test file error fix added
build code after add before into only need should update config change check using used set
data call make return function value type other still working issue tests because server
version api failing request path local first same there more import default script output
user way option works log missing project command branch
""".split()

DEV = """
migration migrations migrate schema database postgres sqlite mysql redis queue worker cron job
docker compose dockerfile kubernetes helm deploy deployment rollout staging production canary
pytest fixture fixtures mock coverage flaky unittest jest vitest playwright cypress snapshot
webpack vite esbuild rollup typescript javascript python rust golang node npm pnpm yarn pip uv
poetry virtualenv lockfile dependency dependencies upgrade downgrade pin bump semver release
changelog tag merge rebase commit cherry pick conflict bisect stash hook hooks precommit lint
linter ruff black mypy pyright eslint prettier formatter clippy cargo rustc borrow lifetime
async await promise callback thread threads mutex deadlock race timeout retry backoff
webhook stripe checkout invoice payment subscription refund coupon cart order orders shop
analytics consent banner cookie tracking gtag plausible matomo privacy gdpr
auth oauth token jwt session login logout signup password hash bcrypt argon secret secrets
vault env dotenv credentials permission permissions role roles admin rbac acl
nginx caddy traefik proxy certificate tls https ssl letsencrypt dns cname domain cdn cloudflare
s3 bucket upload download presigned blob storage backup restore snapshot volume disk
memory leak oom heap profiler flamegraph latency throughput benchmark p99 cache invalidation
index query planner explain vacuum analyze transaction rollback savepoint wal checkpoint lock
fts5 trigram tokenizer bm25 ranking search recall embedding vector sqlite-vec
graphql rest grpc protobuf openapi swagger endpoint route router middleware handler
react component hook state props render rerender suspense nextjs remix svelte vue tailwind
css layout flexbox grid responsive mobile viewport font icon svg canvas animation
accessibility aria focus keyboard screenreader contrast dark theme
i18n locale translation gettext unicode utf8 encoding emoji diacritics accent
terraform ansible pulumi cloudformation lambda gcp azure aws ec2 ecs fargate iam vpc subnet
monitoring prometheus grafana alert alerting pagerduty sentry opentelemetry tracing span metric
logging logger structlog journald syslog rotate logrotate
ci pipeline workflow github actions runner artifact cachekey matrix gitlab jenkins
enospc eacces econnrefused etimedout sigterm sigkill segfault panic traceback stacktrace
regression bisected reproduce repro workaround hotfix patch revert
refactor rename extract inline dead duplicate cleanup typo docs readme tutorial
scraper crawler parser lexer tokenizer serializer deserializer json yaml toml csv xml
cli argparse typer click flag flags subcommand prompt spinner progress
email smtp mailgun sendgrid template notification push sms twilio
pdf invoice report export import spreadsheet chart dashboard widget
calendar timezone utc dst cronjob scheduler celery rq dramatiq sidekiq
llm prompt summarizer summary model claude codex gpt anthropic openai litellm agent agents mcp
transcript transcripts segment segments connector connectors inbox device devices cursor
""".split()

STEMS = """
user order invoice payment cart product customer account session token config setting
report job task queue event message channel webhook client server request response
cache store repo service handler worker manager parser builder loader writer reader
index schema table column field record item entry batch chunk page view model form
""".split()
VERBS = "get set load save parse build create delete update fetch send handle validate render sync".split()
EXTS = "py ts tsx js rs go toml yaml json md sql sh css html".split()
DIRS = "src lib app api tests scripts docs config migrations components utils core internal".split()
SOURCES = ["claude-local", "codex-local", "agent-laptop", "agent-ci", "inbox-anna", "inbox-ben"]
SOURCE_WEIGHTS = [40, 25, 12, 8, 9, 6]
PROJECTS = ["shop", "jezero", "billing", "infra", "website", "mobile-app", "data-pipeline", "docs",
            "crawler", "auth-service", "analytics", "playground"]
ATOM_TYPES = ["decision", "fix", "error", "command", "file", "config", "number", "todo", "fact"]
ZIPF_S = 1.07
SPAN_DAYS = 730


def random_vocabulary(size: int = 20_000, seed: int = 7) -> list[str]:
    """The vocabulary of the first FTS5 measurements (notes/dependencies.md 1.6): random tokens of
    3-12 letters, 5% with one diacritic. Their trigrams are spread evenly, unlike real words'."""
    rng = random.Random(seed)
    accents = "éèêëáàâäíìîïóòôöúùûüñç"
    words, seen = [], set()
    while len(words) < size:
        w = "".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(rng.randint(3, 12)))
        if rng.random() < 0.05:
            i = rng.randrange(len(w))
            w = w[:i] + rng.choice(accents) + w[i + 1:]
        if w not in seen:
            seen.add(w)
            words.append(w)
    return words


def vocabulary(size: int = 20_000, seed: int = 7, kind: str = "dev") -> list[str]:
    if kind == "random":
        return random_vocabulary(size, seed)
    rng = random.Random(seed)
    words = list(dict.fromkeys(COMMON))
    dev = [w for w in dict.fromkeys(DEV) if w not in words]
    rng.shuffle(dev)
    words += dev
    seen = set(words)
    gens = [
        lambda: f"{rng.choice(STEMS)}_{rng.choice(STEMS)}",
        lambda: rng.choice(VERBS) + rng.choice(STEMS).capitalize() + rng.choice(["", "s", "Id", "List"]),
        lambda: f"{rng.choice(DIRS)}/{rng.choice(STEMS)}_{rng.choice(STEMS)}.{rng.choice(EXTS)}",
        lambda: f"{rng.choice(STEMS)}.{rng.choice(EXTS)}",
        lambda: f"E{rng.randint(100, 9999)}",
        lambda: f"{rng.choice(STEMS)}-{rng.choice(VERBS)}-{rng.randint(2, 99)}",
        lambda: "".join(rng.choice("bcdfghklmnprstvz") + rng.choice("aeiou") for _ in range(rng.randint(2, 4)))
        + rng.choice(["", "er", "ly", "ing", "ion", "é", "ñ"]),
    ]
    while len(words) < size:
        w = rng.choice(gens)()
        if w not in seen:
            seen.add(w)
            words.append(w)
    return words


class Corpus:
    def __init__(self, seed: int = 1, size: int = 20_000, kind: str = "dev"):
        self.rng = random.Random(seed)
        self.words = vocabulary(size, kind=kind)
        weights = [1 / (r ** ZIPF_S) for r in range(1, len(self.words) + 1)]
        self.cum = list(itertools.accumulate(weights))
        pw = [1 / (r ** 1.2) for r in range(1, len(PROJECTS) + 1)]
        self.project_cum = list(itertools.accumulate(pw))
        self.source_cum = list(itertools.accumulate(SOURCE_WEIGHTS))
        self.start = datetime(2023, 12, 1, tzinfo=timezone.utc)

    def text(self, n: int) -> str:
        return " ".join(self.rng.choices(self.words, cum_weights=self.cum, k=n))

    def item(self, i: int, n: int) -> ItemRecord:
        rng = self.rng
        source = SOURCES[bisect.bisect(self.source_cum, rng.random() * self.source_cum[-1])]
        project = None if rng.random() < 0.08 else PROJECTS[
            bisect.bisect(self.project_cum, rng.random() * self.project_cum[-1])]
        # Ingestion order roughly follows time, with jitter and a 10% backfill of old sessions.
        frac = i / max(n - 1, 1)
        if rng.random() < 0.1:
            frac = rng.random()
        frac = min(max(frac + rng.gauss(0, 0.01), 0.0), 1.0)
        occurred = self.start + timedelta(days=SPAN_DAYS * frac, seconds=rng.randint(0, 3600))
        title = self.text(7).capitalize()
        summary = self.text(40) + "."
        nq = rng.randint(3, 6)
        questions = [self.text(max(2, 22 // nq)) + "?" for _ in range(nq)]
        atoms = [{"type": rng.choice(ATOM_TYPES), "text": self.text(rng.randint(4, 10))} for _ in range(7)]
        return ItemRecord(
            uid=f"{source}:s{i}:0", source=source, agent=source.split("-")[0], session_id=f"s{i}",
            segment_index=0, occurred_at=occurred, title=title[:120], summary=summary, questions=questions,
            atoms=atoms, original="(benchmark item: no transcript)", content_hash=f"h{i}",
            summarizer="bench", summary_schema=1, project=project,
        )


def build(path, n: int, *, seed: int = 1, batch: int = 1000, progress=None, kind: str = "dev") -> None:
    write_library(path, Corpus(seed, kind=kind), n, batch, progress)


def write_library(path, corpus, n: int, batch: int, progress=None) -> None:
    """The library at `path` filled with `corpus.item(i, n)` for i < n, `batch` items a write."""
    with Store(path) as store:
        for start in range(0, n, batch):
            store.write([corpus.item(i, n) for i in range(start, min(start + batch, n))])
            if progress:
                progress(min(start + batch, n))
        store.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
