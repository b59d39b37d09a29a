"""The labelled queries: what an agent would type into `search`, with the sessions that answer it.

Kinds
-----
error       a fragment of an error message, pasted as the agent saw it
command     a command line or part of one
file        a file name or path
decision    the current state of a decision that was revised; only the NEWEST session of the
            chain is relevant (the older ones are the distractors that recency must beat)
topic       a few words naming what the session was about
paraphrase  the problem described in other words than the transcript's
language    a Spanish query for an English session, or an English query for a Spanish one
long_end    a fact stated only near the end of a long session (one cut into several segments)

`relevant` names sessions by their spec key (specs/). A query with several relevant sessions
counts each one for recall (recall@5 = share of them in the first five sessions).
"""

from __future__ import annotations

from dataclasses import dataclass

KINDS = ("error", "command", "file", "decision", "topic", "paraphrase", "language", "long_end")


@dataclass(frozen=True)
class Query:
    kind: str
    text: str
    relevant: tuple[str, ...]


def _q(kind: str, text: str, *relevant: str) -> Query:
    assert kind in KINDS, kind
    return Query(kind, text, tuple(relevant))


QUERIES: list[Query] = [
    # -- pasted error fragments ---------------------------------------------------------------------
    _q("error", "SignatureVerificationError: No signatures found matching the expected signature for payload", "shop-webhook-sig"),
    _q("error", "OSError: cannot write mode RGBA as JPEG", "shop-thumbs"),
    _q("error", "Conflicting migrations detected; multiple leaf nodes in the migration graph", "shop-migration-conflict"),
    _q("error", "redis.exceptions.ConnectionError: Error 111 connecting to localhost:6379. Connection refused.", "shop-redis-cache"),
    _q("error", "FATAL:  remaining connection slots are reserved for non-replication superuser connections", "billing-conn-slots"),
    _q("error", "kombu.exceptions.OperationalError: [Errno 104] Connection reset by peer", "billing-celery-reset"),
    _q("error", 'psycopg2.errors.DuplicateTable: relation "ix_invoices_customer_id" already exists', "billing-alembic-dup"),
    _q("error", 'ERROR:  could not extend file "base/16384/2619": No space left on device', "infra-pg-disk"),
    _q("error", "Error acquiring the state lock ConditionalCheckFailedException: The conditional request failed", "infra-tf-lock"),
    _q("error", "dial tcp: lookup api.stripe.com on 10.43.0.10:53: server misbehaving", "infra-coredns"),
    _q("error", "AAPT: error: resource android:attr/lStar not found.", "mobile-lstar"),
    _q("error", '[!] CocoaPods could not find compatible versions for pod "hermes-engine"', "mobile-pods"),
    _q("error", "Error: Rendered more hooks than during the previous render.", "mobile-hooks-crash"),
    _q("error", "pyarrow.lib.ArrowInvalid: Unable to merge: Field duration has incompatible types: int64 vs double", "data-arrow-schema"),
    _q("error", "_ArrayMemoryError: Unable to allocate 1.21 GiB for an array with shape", "data-duckdb-memory"),
    _q("error", "Failure in test unique_stg_trips_trip_id Got 37 results, configured to fail if != 0", "data-dbt-unique"),
    _q("error", "error[E0502]: cannot borrow `self.scopes` as mutable because it is also borrowed as immutable", "plume-borrowck"),
    _q("error", "No suitable version of LLVM was found system-wide or pointed to by LLVM_SYS_150_PREFIX", "plume-backend-2"),

    # -- commands -----------------------------------------------------------------------------------
    _q("command", "python manage.py rebuild_thumbnails --format webp", "shop-thumbs"),
    _q("command", "makemigrations --merge", "shop-migration-conflict"),
    _q("command", "stripe listen --forward-to localhost:8000/webhooks/stripe/", "shop-webhook-sig"),
    _q("command", "python manage.py typesense_reindex", "shop-search-3"),
    _q("command", "terraform force-unlock", "infra-tf-lock"),
    _q("command", "hcloud volume resize", "infra-pg-disk"),
    _q("command", "restic forget --keep-daily 7 --keep-weekly 4 --keep-monthly 12 --prune", "infra-backups-es"),
    _q("command", "ansible-playbook playbooks/gh-runner.yml", "infra-ci-2", "infra-ci-3"),
    _q("command", "kubectl rollout restart deploy coredns", "infra-coredns"),
    _q("command", "pod install --repo-update", "mobile-pods"),
    _q("command", "npx expo prebuild --clean", "mobile-lstar", "mobile-mmkv"),
    _q("command", "eas build --platform android --profile preview", "mobile-push-2"),
    _q("command", "dbt build --select staging", "data-dbt-unique"),
    _q("command", "airflow dags test tripdata_nightly", "data-orch-2"),
    _q("command", "dagster asset materialize", "data-orch-3"),
    _q("command", "cargo remove lalrpop-util", "plume-parser-2"),
    _q("command", "uv remove slowapi", "billing-ratelimit-3"),

    # -- file names ---------------------------------------------------------------------------------
    _q("file", "checkout/webhooks.py", "shop-webhook-sig"),
    _q("file", "catalog/migrations/0043_merge_20250509_1012.py", "shop-migration-conflict"),
    _q("file", "templates/emails/order_confirmation.html", "shop-email-tz"),
    _q("file", "app/services/pdf.py", "billing-pdf-1"),
    _q("file", "app/money.py", "billing-vat-rounding"),
    _q("file", "deploy/pgbouncer.ini", "billing-conn-slots"),
    _q("file", "app/celery_config.py", "billing-celery-reset"),
    _q("file", "token_bucket.lua", "billing-ratelimit-3"),
    _q("file", "k8s/cert-manager/clusterissuer-letsencrypt.yaml", "infra-tls-2"),
    _q("file", ".github/workflows/python-ci.yml", "infra-ci-1", "infra-ci-2", "infra-ci-3"),
    _q("file", "src/screens/TideChart.tsx", "mobile-hooks-crash", "mobile-state-2"),
    _q("file", "src/storage/mmkv.ts", "mobile-mmkv"),
    _q("file", "tripdata/clean.py", "data-arrow-schema"),
    _q("file", "plume-types/src/infer.rs", "plume-borrowck"),
    _q("file", "plume-syntax/src/pratt.rs", "plume-parser-2"),

    # -- current decisions (only the newest session of each chain) ------------------------------------
    _q("decision", "which search engine does the shop use for product search", "shop-search-3"),
    _q("decision", "product search backend typo tolerance", "shop-search-3"),
    _q("decision", "how are invoice PDFs generated", "billing-pdf-2"),
    _q("decision", "API rate limit per key requests per minute", "billing-ratelimit-3"),
    _q("decision", "rate limit for partner API keys", "billing-ratelimit-3"),
    _q("decision", "where does CI run, which runners", "infra-ci-3"),
    _q("decision", "how are TLS certificates issued and renewed", "infra-tls-2"),
    _q("decision", "state management library in the tidepool app", "mobile-state-2"),
    _q("decision", "push notifications provider", "mobile-push-2"),
    _q("decision", "orchestrator for the nightly tripdata load", "data-orch-3"),
    _q("decision", "plume parser implementation", "plume-parser-2"),
    _q("decision", "plume native code generation backend", "plume-backend-2"),

    # -- topics -------------------------------------------------------------------------------------
    _q("topic", "stripe webhook orders stuck pending", "shop-webhook-sig"),
    _q("topic", "locust load test Black Friday", "shop-loadtest-long"),
    _q("topic", "product image thumbnails webp", "shop-thumbs"),
    _q("topic", "Redis cache category pages", "shop-redis-cache"),
    _q("topic", "PgBouncer transaction pooling", "billing-conn-slots"),
    _q("topic", "migrate Stripe Charges to PaymentIntents", "billing-paymentintents-long"),
    _q("topic", "k3s cluster upgrade", "infra-k3s-upgrade-long"),
    _q("topic", "restic Backblaze B2 backups", "infra-backups-es"),
    _q("topic", "offline cache forecasts MMKV", "mobile-mmkv"),
    _q("topic", "closure conversion free variables environment", "plume-closures"),
    _q("topic", "mark-sweep garbage collector shadow stack", "plume-gc-long"),
    _q("topic", "zsh startup slow nvm", "dotfiles-zsh"),

    # -- paraphrases (other words than the transcript's) ----------------------------------------------
    _q("paraphrase", "order emails show the wrong hour for customers in Spain", "shop-email-tz"),
    _q("paraphrase", "penny discrepancy between invoice total and line items", "billing-vat-rounding"),
    _q("paraphrase", "app crashes when the phone is turned sideways", "mobile-hooks-crash"),
    _q("paraphrase", "background jobs silently stopped sending overdue payment reminders", "billing-celery-reset"),
    _q("paraphrase", "name resolution failing inside kubernetes when calling the payment provider", "infra-coredns"),
    _q("paraphrase", "database volume ran out of room", "infra-pg-disk"),
    _q("paraphrase", "misspelled product names give no search results", "shop-search-2", "shop-search-3"),
    _q("paraphrase", "compiler toolchain dependency too painful to install, pick a lighter code generator", "plume-backend-2"),
    _q("paraphrase", "app unusable without internet connection", "mobile-mmkv"),
    _q("paraphrase", "too much boilerplate for global state in the mobile app", "mobile-state-2"),
    _q("paraphrase", "storefront slow on phones because pictures are huge", "shop-thumbs"),
    _q("paraphrase", "nightly import failed for days and nobody noticed", "data-orch-2"),

    # -- other language -------------------------------------------------------------------------------
    _q("language", "coupon applied twice on double click, race condition", "shop-cupon-es"),
    _q("language", "payment reminders sent for invoices that were already paid", "billing-dunning-es"),
    _q("language", "restic backup retention policy", "infra-backups-es"),
    _q("language", "liveness probe restarts billing-api pods CrashLoopBackOff", "infra-crashloop-es"),
    _q("language", "blank screen on launch on Android 14 splash screen", "mobile-splash-es"),
    _q("language", "weather join returns nulls after daylight saving time change", "data-dst-es"),
    _q("language", "¿cómo arreglamos la verificación de firma del webhook de Stripe?", "shop-webhook-sig"),
    _q("language", "error de disco lleno en la base de datos postgres", "infra-pg-disk"),
    _q("language", "¿qué servicio usamos para las notificaciones push?", "mobile-push-2"),
    _q("language", "límite de peticiones por minuto por clave de API", "billing-ratelimit-3"),
    _q("language", "la app se cierra al girar el móvil en la pantalla de mareas", "mobile-hooks-crash"),
    _q("language", "con qué generamos las facturas en PDF", "billing-pdf-2"),

    # -- facts near the end of long sessions ----------------------------------------------------------
    _q("long_end", "prefetch_related variants__prices N+1 category page", "shop-loadtest-long"),
    _q("long_end", "category page p95 310 ms at 300 users", "shop-loadtest-long"),
    _q("long_end", "requires_action 402 next_action.redirect_to_url", "billing-paymentintents-long"),
    _q("long_end", "3-D Secure payment_intent.payment_failed invoice past_due", "billing-paymentintents-long"),
    _q("long_end", "traefik allowCrossNamespace middleware in another namespace", "infra-k3s-upgrade-long"),
    _q("long_end", "traefik.containo.us apiVersion replaced by traefik.io/v1alpha1", "infra-k3s-upgrade-long"),
    _q("long_end", "Part number must be an integer between 1 and 10000, inclusive", "data-backfill-long"),
    _q("long_end", "multipart_chunksize 64 MiB TransferConfig", "data-backfill-long"),
    _q("long_end", "how many trips did the 2019-2024 backfill load in total", "data-backfill-long"),
    _q("long_end", "PLUME_GC_STRESS emit_call_args temp roots", "plume-gc-long"),
    _q("long_end", "segfault in nested_closures: temporaries of call arguments not on the shadow stack", "plume-gc-long"),
]

# The decision chains, oldest first: `later` from any session but the last should find the newer
# ones, and from the last nothing on its subject. `query` is what an agent would pass as the
# decision's own words (the first `decision` query about the chain).
CHAINS: list[tuple[str, ...]] = [
    ("shop-search-1", "shop-search-2", "shop-search-3"),
    ("billing-pdf-1", "billing-pdf-2"),
    ("billing-ratelimit-1", "billing-ratelimit-2", "billing-ratelimit-3"),
    ("infra-ci-1", "infra-ci-2", "infra-ci-3"),
    ("infra-tls-1", "infra-tls-2"),
    ("mobile-state-1", "mobile-state-2"),
    ("mobile-push-1", "mobile-push-2"),
    ("data-orch-1", "data-orch-2", "data-orch-3"),
    ("plume-parser-1", "plume-parser-2"),
    ("plume-backend-1", "plume-backend-2"),
]


def chain_query(chain: tuple[str, ...]) -> str:
    return next(q.text for q in QUERIES if q.kind == "decision" and chain[-1] in q.relevant)
