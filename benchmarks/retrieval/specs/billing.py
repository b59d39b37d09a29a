"""The billing API: FastAPI, SQLAlchemy 2, Postgres, Celery and Stripe (Ben's machine, Codex mostly)."""

from __future__ import annotations

from datetime import timedelta

import tool_output as noise
from ._base import NOW, A, C, Spec, U, rng_for

CWD = "/home/ben/src/billing-api"
CWD_ES = "/home/marta/src/billing-api"

TESTS = {
    "tests/api/test_invoices.py": 31, "tests/api/test_customers.py": 17, "tests/api/test_auth.py": 12,
    "tests/api/test_ratelimit.py": 6, "tests/services/test_tax.py": 24, "tests/services/test_dunning.py": 10,
    "tests/services/test_pdf.py": 5, "tests/services/test_payments.py": 28, "tests/test_webhooks.py": 14,
    "tests/test_migrations.py": 3,
}
PLUGINS = "anyio-4.4.0, asyncio-0.23.7, cov-5.0.0, respx-0.21.1"


def specs() -> list[Spec]:
    out = []

    # -- decision chain: invoice PDFs (WeasyPrint -> Gotenberg) ------------------------------------
    r = rng_for("billing-pdf-1")
    out.append(Spec("billing-pdf-1", "codex", CWD, 420, [
        U("Customers want PDF invoices attached to the invoice email. Render them from the same HTML template we use "
          "for the web view."),
        C("ls app/templates/invoices/", "invoice.html\ninvoice_email.txt\n_lines.html\n_totals.html\nstyles.css"),
        A("WeasyPrint renders HTML+CSS to PDF in-process, with good print CSS support (@page, page numbers). "
          "I'll add `app/services/pdf.py` with `render_invoice_pdf(invoice) -> bytes` using WeasyPrint and the existing "
          "template."),
        C("uv add weasyprint==62.3", "Resolved 41 packages in 1.21s\n + cffi==1.16.0\n + cssselect2==0.7.0\n"
          " + fonttools==4.53.0\n + pydyf==0.10.0\n + pyphen==0.15.0\n + tinycss2==1.3.0\n + weasyprint==62.3"),
        C("pytest tests/services/test_pdf.py -q", noise.pytest_run(r, {"tests/services/test_pdf.py": 5}, plugins=PLUGINS)),
        A("Invoice PDFs are rendered with WeasyPrint 62.3 from app/templates/invoices/invoice.html "
          "(`app/services/pdf.py::render_invoice_pdf`) and attached to the invoice email as INV-<number>.pdf."),
    ], notes="PDF chain 1/2: WeasyPrint"))

    r = rng_for("billing-pdf-2")
    out.append(Spec("billing-pdf-2", "claude", CWD, 160, [
        U("The invoice PDFs in production have boxes instead of the € sign and the Celery worker uses 700 MB when a "
          "customer has a 40-page invoice. Fonts are fine locally."),
        C("docker compose exec worker fc-list | wc -l", "0"),
        C("docker compose exec worker python -c 'import weasyprint; print(weasyprint.__version__)'", "62.3"),
        A("The slim image has no fonts at all, so WeasyPrint falls back to nothing for €. We could install fonts, but "
          "the memory use of in-process rendering is the bigger problem: every worker holds the layout of the whole "
          "document. Running Gotenberg (Chromium in its own container) moves both problems out of the worker."),
        U("Fine, let's use Gotenberg. Keep the HTML template."),
        C("docker compose up -d gotenberg && curl -s localhost:3000/health", '{"status":"up","details":{"chromium":{"status":"up"}}}'),
        C("pytest tests/services/test_pdf.py -q", noise.pytest_run(r, {"tests/services/test_pdf.py": 7}, plugins=PLUGINS)),
        C("uv remove weasyprint", "Resolved 34 packages in 0.9s\n - weasyprint==62.3\n - pydyf==0.10.0\n - pyphen==0.15.0"),
        A("Invoice PDFs are now produced by Gotenberg 8 (`gotenberg` service, POST /forms/chromium/convert/html) from the "
          "same invoice.html template; WeasyPrint is removed. Worker memory for a 40-page invoice went from 700 MB to "
          "90 MB and the € sign renders because Chromium's image ships fonts."),
    ], notes="PDF chain 2/2 (current): Gotenberg"))

    # -- decision chain: rate limit (100/min -> 300/min partners -> Redis token bucket 600/min) ------
    r = rng_for("billing-ratelimit-1")
    out.append(Spec("billing-ratelimit-1", "codex", CWD, 500, [
        U("One integration hammers /v1/invoices with thousands of requests a minute. Add rate limiting per API key."),
        C("uv add slowapi", "Resolved 29 packages in 0.8s\n + limits==3.13.0\n + slowapi==0.1.9"),
        A("slowapi wraps `limits` and plugs into FastAPI as a decorator. Key function: the API key's id from the "
          "Authorization header, not the client IP (integrations sit behind NAT)."),
        C("pytest tests/api/test_ratelimit.py -q", noise.pytest_run(r, {"tests/api/test_ratelimit.py": 4}, plugins=PLUGINS)),
        A("Rate limit set to 100 requests per minute per API key (slowapi, `@limiter.limit('100/minute')` on the "
          "/v1 router, in-memory storage). Over the limit the API returns 429 with Retry-After."),
    ], notes="rate-limit chain 1/3: 100/minute slowapi"))

    r = rng_for("billing-ratelimit-2")
    out.append(Spec("billing-ratelimit-2", "codex", CWD, 330, [
        U("Acme's accounting sync gets 429s every night at month end. They are a partner; give partner keys more room."),
        C("grep -rn 'limiter.limit' app/", "app/api/v1/__init__.py:18:@limiter.limit('100/minute')"),
        A("I'll make the limit a function of the key: partner keys (api_keys.tier = 'partner') get 300/minute, "
          "others keep 100/minute."),
        C("pytest tests/api/test_ratelimit.py -q", noise.pytest_run(r, {"tests/api/test_ratelimit.py": 6}, plugins=PLUGINS)),
        A("Partner API keys now get 300 requests per minute; standard keys stay at 100/minute (dynamic limit in "
          "`app/api/ratelimit.py::limit_for_key`)."),
    ], notes="rate-limit chain 2/3: 300/minute partners"))

    r = rng_for("billing-ratelimit-3")
    out.append(Spec("billing-ratelimit-3", "claude", CWD, 60, [
        U("Since we scaled the API to 3 replicas the rate limit is effectively 3x, slowapi counts in memory per pod. "
          "And partners still complain about bursts at month end. Can we redo rate limiting properly?"),
        C("kubectl -n billing get pods -l app=billing-api", noise.kubectl_pods(r, ["billing-api"] * 3)),
        A("Per-pod in-memory counters can't be shared. A token bucket in Redis (one Lua script, atomic) gives one "
          "limit across replicas and allows short bursts. Proposal: every key gets 600 requests/minute refill with a "
          "burst capacity of 50; no separate partner tier needed at that level."),
        U("agreed, do it and drop slowapi"),
        C("uv remove slowapi limits", "Resolved 27 packages in 0.7s\n - limits==3.13.0\n - slowapi==0.1.9"),
        C("pytest tests/api/test_ratelimit.py -q", noise.pytest_run(r, {"tests/api/test_ratelimit.py": 9}, plugins=PLUGINS)),
        A("Rate limiting is now a Redis token bucket (`app/api/ratelimit.py`, Lua script `token_bucket.lua`): 600 "
          "requests/minute per API key with a burst of 50, shared by all replicas. slowapi and the partner tier are "
          "gone. 429 responses keep the Retry-After header."),
    ], notes="rate-limit chain 3/3 (current): Redis token bucket 600/min burst 50"))

    # -- errors -------------------------------------------------------------------------------------
    r = rng_for("billing-conn-slots")
    err = ("sqlalchemy.exc.OperationalError: (psycopg2.OperationalError) connection to server at \"10.0.3.12\", port 5432 "
           "failed: FATAL:  remaining connection slots are reserved for non-replication superuser connections")
    out.append(Spec("billing-conn-slots", "codex", CWD, 280, [
        U(f"Month-end invoice run fails halfway with\n{err}\nWhat's eating the connections?"),
        C("psql -h 10.0.3.12 -U billing -c \"select application_name, state, count(*) from pg_stat_activity group by 1,2 order by 3 desc\"",
          " application_name |        state        | count\n------------------+---------------------+-------\n"
          " celery-worker    | idle                |    64\n billing-api      | idle                |    21\n"
          " celery-worker    | active              |     8\n billing-api      | idle in transaction |     3\n(4 rows)"),
        A("Each Celery process has its own SQLAlchemy pool (pool_size 5 + max_overflow 10) and there are 8 worker "
          "processes with prefork, so up to 120 connections from Celery alone, over max_connections = 100. I'll put "
          "PgBouncer in transaction mode in front and shrink the pools."),
        C("cat deploy/pgbouncer.ini", "[databases]\nbilling = host=10.0.3.12 port=5432 dbname=billing\n\n[pgbouncer]\n"
          "pool_mode = transaction\ndefault_pool_size = 25\nmax_client_conn = 500"),
        C("pytest tests/services/test_payments.py -q", noise.pytest_run(r, {"tests/services/test_payments.py": 28}, plugins=PLUGINS)),
        A("Fixed the 'remaining connection slots are reserved' failure: PgBouncer (pool_mode = transaction, "
          "default_pool_size = 25) in front of Postgres, SQLAlchemy uses NullPool behind it, and psycopg2 prepared "
          "statements are off. The month-end run completed: 18,204 invoices."),
    ], notes="error: remaining connection slots are reserved; PgBouncer"))

    r = rng_for("billing-celery-reset")
    out.append(Spec("billing-celery-reset", "claude", CWD, 210, [
        U("Dunning emails stopped going out on Tuesday. Flower shows send_dunning_email tasks stuck in RECEIVED."),
        C("docker compose logs --tail 40 worker", noise.app_log(r, "celery.worker", [
            "Task invoices.tasks.send_dunning_email[{id}] received",
            "consumer: Connection to broker lost. Trying to re-establish the connection...",
            "kombu.exceptions.OperationalError: [Errno 104] Connection reset by peer",
            "Task invoices.tasks.sync_stripe_customer[{id}] succeeded in {ms}.0s: None"],
            40, NOW - timedelta(days=210), level_mix=("INFO", "WARNING", "ERROR"))),
        A("The broker is RabbitMQ behind the cloud load balancer, which drops idle TCP connections after 350 s. "
          "Celery's heartbeat defaults are off for this transport config, so the connection dies silently and "
          "prefetched tasks sit unacknowledged. Set `broker_heartbeat = 30` and `broker_connection_retry_on_startup = True`, "
          "and lower prefetch."),
        C("grep -n 'broker_' app/celery_config.py", "3:broker_url = env('CELERY_BROKER_URL')\n4:broker_pool_limit = 10"),
        C("pytest tests/services/test_dunning.py -q", noise.pytest_run(r, {"tests/services/test_dunning.py": 10}, plugins=PLUGINS)),
        A("Fixed stuck dunning tasks: `kombu.exceptions.OperationalError: [Errno 104] Connection reset by peer` came from "
          "the load balancer closing idle AMQP connections. app/celery_config.py now sets broker_heartbeat = 30, "
          "worker_prefetch_multiplier = 1, task_acks_late = True. 312 queued dunning emails went out after the restart."),
    ], notes="error: kombu Connection reset by peer"))

    r = rng_for("billing-alembic-dup")
    out.append(Spec("billing-alembic-dup", "codex", CWD, 140, [
        U("`alembic upgrade head` fails on staging after the customers index change. Works on my laptop."),
        C("alembic upgrade head", "INFO  [alembic.runtime.migration] Context impl PostgresqlImpl.\n"
          "INFO  [alembic.runtime.migration] Will assume transactional DDL.\n"
          "INFO  [alembic.runtime.migration] Running upgrade 7c2d1e4f9a0b -> 3f9e6b21c7d4, index invoices by customer\n"
          "Traceback (most recent call last):\n  ...\npsycopg2.errors.DuplicateTable: relation \"ix_invoices_customer_id\" already exists\n\n"
          "[SQL: CREATE INDEX ix_invoices_customer_id ON invoices (customer_id)]", failed=True),
        C("psql $STAGING_URL -c '\\d invoices' | grep ix_", "    \"ix_invoices_customer_id\" btree (customer_id)\n"
          "    \"ix_invoices_status\" btree (status)"),
        A("Someone created the index by hand on staging during an incident. The migration should be idempotent: "
          "`op.create_index(..., if_not_exists=True)` (Alembic 1.12+), and I'll build it CONCURRENTLY outside the "
          "transaction for prod."),
        C("alembic upgrade head", "INFO  [alembic.runtime.migration] Running upgrade 7c2d1e4f9a0b -> 3f9e6b21c7d4, "
          "index invoices by customer"),
        C("pytest tests/test_migrations.py -q", noise.pytest_run(r, {"tests/test_migrations.py": 3}, plugins=PLUGINS)),
        A("migrations/versions/3f9e6b21c7d4_index_invoices_by_customer.py now uses if_not_exists=True and "
          "postgresql_concurrently=True inside an autocommit_block; staging upgraded."),
    ], notes="error: DuplicateTable ix_invoices_customer_id"))

    r = rng_for("billing-vat-rounding")
    out.append(Spec("billing-vat-rounding", "claude", CWD, 30, [
        U("An accountant flagged that some invoice totals are 1 cent lower than the sum of the lines. Looks random."),
        C("pytest tests/services/test_tax.py -q", noise.pytest_run(r, {"tests/services/test_tax.py": 26}, plugins=PLUGINS, failures=[(
            "tests/services/test_tax.py::test_vat_half_cent",
            "    def test_vat_half_cent():\n        line = Line(net=Decimal('10.25'), vat_rate=Decimal('0.21'))\n"
            ">       assert line.vat == Decimal('2.15')\nE       AssertionError: assert Decimal('2.14') == Decimal('2.15')")])),
        A("`quantize(Decimal('0.01'))` defaults to ROUND_HALF_EVEN (banker's rounding): 2.1525 rounds to 2.15 but "
          "2.1450 rounds to 2.14. Spanish invoicing rules expect half-up. Also totals are rounded per line and then "
          "summed, while the PDF sums then rounds."),
        C("grep -rn 'quantize' app/ | wc -l", "23"),
        A("I'll add `app/money.py` with `round_money()` using ROUND_HALF_UP and replace all 23 quantize calls, and compute "
          "VAT per line, rounding each line, then sum: the invoice total equals the sum of its lines."),
        C("pytest -q", noise.pytest_run(r, TESTS, plugins=PLUGINS)),
        A("Rounding is now ROUND_HALF_UP everywhere through app/money.py::round_money, VAT is rounded per line and "
          "the total is the sum of rounded lines. Found 212 past invoices with a 1-cent difference; listed in "
          "reports/rounding_2026.csv for the accountant, no re-issue."),
    ], notes="paraphrase target: totals off by a cent; ROUND_HALF_EVEN"))

    r = rng_for("billing-dunning-es")
    out.append(Spec("billing-dunning-es", "codex", CWD_ES, 90, [
        U("Varios clientes se quejan: les llegan recordatorios de pago de facturas que ya pagaron hace días. "
          "¿Puedes revisar la tarea de recordatorios?"),
        C("grep -n 'def send_dunning_email' -A20 app/invoices/tasks.py", noise.source_file(r, [
            "@app.task(bind=True, max_retries=3)", "def send_dunning_email(self, invoice_id):",
            "    invoice = Invoice.get(invoice_id)", "    mailer.send('dunning', to=invoice.customer.email, ctx={'invoice': invoice})"])),
        A("La tarea se programa con countdown de 3 días al vencer la factura y no vuelve a comprobar el estado antes "
          "de enviar. Si el cliente paga en ese intervalo, el recordatorio sale igual. Añado la comprobación "
          "`invoice.status == 'open'` justo antes de enviar y revoco las tareas pendientes al recibir el webhook "
          "invoice.paid."),
        C("pytest tests/services/test_dunning.py -q", noise.pytest_run(r, {"tests/services/test_dunning.py": 12}, plugins=PLUGINS)),
        A("Listo: `send_dunning_email` ya no envía si la factura no está 'open', y el webhook invoice.paid revoca el "
          "recordatorio programado. He añadido dos tests. En los últimos 30 días se enviaron 47 recordatorios a "
          "facturas ya pagadas."),
    ], lang="es", notes="Spanish: dunning reminders for already-paid invoices"))

    out.append(_long_payment_intents())
    return out


def _long_payment_intents() -> Spec:
    r = rng_for("billing-paymentintents-long")
    turns = [
        U("Stripe is sunsetting the Charges API path we use for card payments. Migrate app/services/payments.py to "
          "PaymentIntents, keep the public /v1/payments API unchanged, and keep all tests green."),
        C("grep -rn 'stripe.Charge' app/ tests/", noise.grep_hits(r, "stripe.Charge",
          ["app/services/payments.py", "app/api/v1/payments.py", "tests/services/test_payments.py", "tests/fixtures/stripe.py"],
          ["charge = stripe.Charge.create(amount=amount, currency=currency, source=token)", "stripe.Charge.retrieve(charge_id)",
           "mock_charge = mocker.patch('stripe.Charge.create')", "refund = stripe.Refund.create(charge=charge.id)"], 40)),
        C("wc -l app/services/payments.py tests/services/test_payments.py", "  612 app/services/payments.py\n  944 tests/services/test_payments.py\n 1556 total"),
    ]
    fails = [
        ("tests/services/test_payments.py::test_charge_card_success", "E       AttributeError: 'PaymentIntent' object has no attribute 'paid'"),
        ("tests/services/test_payments.py::test_refund_full", "E       stripe._error.InvalidRequestError: Request req_8Kx: No such charge: 'pi_3PmQ'"),
        ("tests/services/test_payments.py::test_currency_jpy", "E       AssertionError: assert 150000 == 1500"),
        ("tests/test_webhooks.py::test_charge_succeeded_marks_paid", "E       KeyError: 'charge.succeeded'"),
    ]
    for i in range(16):
        k = max(0, len(fails) - i // 4)
        turns.append(C("pytest tests/services/test_payments.py tests/test_webhooks.py -q",
                       noise.pytest_run(r, {"tests/services/test_payments.py": 28, "tests/test_webhooks.py": 14},
                                        plugins=PLUGINS, failures=fails[:k])))
        turns.append(C("git diff --stat", noise.git_diff_stat(r, ["app/services/payments.py", "app/api/v1/payments.py",
                                                                  "tests/services/test_payments.py", "tests/fixtures/stripe.py",
                                                                  "app/webhooks/stripe.py"])))
        turns.append(C("sed -n 1,80p app/services/payments.py", noise.source_file(r, [
            "import stripe", "from app.money import to_minor_units", "", "def create_payment(invoice, payment_method):",
            "    intent = stripe.PaymentIntent.create(", "        amount=to_minor_units(invoice.total, invoice.currency),",
            "        currency=invoice.currency.lower(), payment_method=payment_method, confirm=True,",
            "        idempotency_key=f'inv-{invoice.id}-{invoice.attempt}')", "    return intent"], pad=60, filler=[
            "    # TODO: remove once all callers pass payment_method", "    log.info('payment created', extra={'invoice': invoice.id})",
            "    if invoice.currency in ZERO_DECIMAL:", "        pass", "    return None", "def _metadata(invoice):",
            "    return {'invoice_id': str(invoice.id), 'customer': invoice.customer_id}"])))
        turns.append(A(r.choice([
            "Fixed the attribute mapping (`intent.status == 'succeeded'` instead of `charge.paid`); rerunning.",
            "Refunds must reference the PaymentIntent (`payment_intent=`), not the charge id; updated and rerunning.",
            "Zero-decimal currencies: JPY amounts must not be multiplied by 100; `to_minor_units` handles that now.",
            "Webhook handler now listens to payment_intent.succeeded instead of charge.succeeded.",
        ])))
    turns += [
        C("pytest -q", noise.pytest_run(r, TESTS, plugins=PLUGINS)),
        U("Looks good. What about cards that need 3-D Secure? That used to just fail with card_declined."),
        C("pytest tests/services/test_payments.py -q -k sca", noise.pytest_run(r, {"tests/services/test_payments.py": 3},
          plugins=PLUGINS, failures=[("tests/services/test_payments.py::test_sca_required",
                                      "E       AssertionError: assert 500 == 402\nE        +  where 500 = <Response [500]>.status_code")])),
        A("With PaymentIntents an SCA card comes back with status `requires_action` instead of an error, and our API "
          "returned 500 on the unknown status. The API now answers 402 Payment Required with the "
          "`next_action.redirect_to_url` URL so the client can send the customer through 3-D Secure, and the "
          "`payment_intent.payment_failed` webhook marks the invoice `past_due`."),
        C("pytest -q", noise.pytest_run(r, TESTS, plugins=PLUGINS)),
        A("Migration to PaymentIntents done: 145 tests green. 3-D Secure: status requires_action -> HTTP 402 with "
          "next_action.redirect_to_url; payment_intent.payment_failed -> invoice past_due. Public /v1/payments API unchanged."),
    ]
    return Spec("billing-paymentintents-long", "claude", CWD, 200, turns,
                notes="LONG: Charges -> PaymentIntents; the SCA/3-D Secure handling (402, requires_action) is at the end",
                end_facts=["requires_action", "redirect_to_url", "past_due"])
