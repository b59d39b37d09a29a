"""The shop: a Django 5 + htmx storefront with Postgres, Redis and Stripe (Ana's laptop, and Lucía's)."""

from __future__ import annotations

from datetime import timedelta

import tool_output as noise
from ._base import NOW, A, C, Spec, U, rng_for

CWD = "/home/ana/src/shop"
CWD_ES = "/home/lucia/src/shop"

TEST_FILES = {
    "tests/test_cart.py": 14, "tests/test_catalog.py": 22, "tests/test_checkout.py": 18, "tests/test_coupons.py": 9,
    "tests/test_orders.py": 16, "tests/test_search.py": 7, "tests/test_accounts.py": 11, "tests/test_emails.py": 6,
    "tests/test_webhooks.py": 8, "tests/test_thumbnails.py": 5,
}
FILES = ["catalog/", "cart/", "checkout/", "orders/", "accounts/", "shop/", "templates/", "static/", "tests/",
         "manage.py", "pyproject.toml", "uv.lock", "docker-compose.yml", "Dockerfile", ".env.example", "README.md"]


def specs() -> list[Spec]:
    out = []

    # -- decision chain: product search (Postgres FTS -> Meilisearch -> Typesense) ------------------
    r = rng_for("shop-search-1")
    out.append(Spec("shop-search-1", "claude", CWD, 470, [
        U("The product search on /search is just `name__icontains`. Customers search 'wool sock' and get nothing "
          "because the product is called 'Merino Socks'. Can we do proper search without adding infrastructure?"),
        C("grep -rn 'icontains' catalog/", "catalog/views.py:41:        qs = Product.objects.filter(name__icontains=q)\n"
          "catalog/admin.py:12:    search_fields = ['name', 'sku']"),
        A("Postgres already has full-text search, and Django exposes it through `django.contrib.postgres.search`. "
          "I'll add a `search_vector` column (SearchVectorField) fed from name, description and tags, with a GIN index, "
          "and rank with SearchRank. Stemming with the 'english' config makes 'sock' match 'Socks'."),
        C("python manage.py makemigrations catalog -n product_search_vector",
          "Migrations for 'catalog':\n  catalog/migrations/0031_product_search_vector.py\n"
          "    - Add field search_vector to product\n    - Create index product_search_gin on field(s) search_vector of model product"),
        C("python manage.py migrate", "Operations to perform:\n  Apply all migrations: accounts, admin, auth, cart, catalog, "
          "checkout, contenttypes, orders, sessions\nRunning migrations:\n  Applying catalog.0031_product_search_vector... OK"),
        C("python manage.py shell -c \"from catalog.search import reindex; reindex()\"", "updated 1843 products"),
        C("pytest tests/test_search.py tests/test_catalog.py -q", noise.pytest_run(r, {"tests/test_search.py": 9, "tests/test_catalog.py": 22})),
        A("Search now uses Postgres full-text search: `search_vector` (SearchVectorField, GIN index `product_search_gin`) "
          "updated by a post_save signal, ranked with SearchRank, 'english' config. 'wool sock' finds 'Merino Socks'. "
          "No new service: we stay on Postgres for search until it stops being enough."),
    ], notes="search chain 1/3: Postgres full-text search"))

    r = rng_for("shop-search-2")
    out.append(Spec("shop-search-2", "codex", CWD, 250, [
        U("Search complaints again: typos like 'meirno' return nothing and the category facets take 900 ms. "
          "Let's evaluate Meilisearch instead of Postgres FTS."),
        C("docker run -d --name meili -p 7700:7700 getmeili/meilisearch:v1.6", f"{noise.sha(r, 64)}"),
        C("python scripts/bench_search.py --backend postgres --queries data/search_queries.txt",
          "backend=postgres queries=500 p50=212ms p95=903ms zero_results=61"),
        C("python scripts/bench_search.py --backend meili --queries data/search_queries.txt",
          "backend=meili queries=500 p50=9ms p95=31ms zero_results=7"),
        A("Meilisearch gives typo tolerance and facets out of the box: zero-result queries drop from 61 to 7 and p95 from "
          "903 ms to 31 ms. I'll add it to docker-compose.yml, sync products through a Celery task on save, and keep the "
          "Postgres `search_vector` only as a fallback when Meilisearch is down."),
        C("git diff --stat", noise.git_diff_stat(r, ["docker-compose.yml", "catalog/search.py", "catalog/tasks.py",
                                                     "catalog/signals.py", "shop/settings.py", "tests/test_search.py"])),
        C("pytest tests/test_search.py -q", noise.pytest_run(r, {"tests/test_search.py": 12})),
        A("Switched product search to Meilisearch v1.6 (service `meili` in docker-compose.yml, index `products`, "
          "filterable attributes category and size). Products are pushed by `catalog.tasks.index_product`. Postgres FTS "
          "stays as fallback only."),
    ], notes="search chain 2/3: Meilisearch"))

    r = rng_for("shop-search-3")
    out.append(Spec("shop-search-3", "claude", CWD, 40, [
        U("The VPS keeps killing meilisearch during the nightly full reindex, dmesg says out of memory. "
          "It's a 2 GB box. What are our options?"),
        C("dmesg -T | grep -i -A2 'killed process'",
          "[Tue Oct  6 03:12:44 2026] Out of memory: Killed process 2211 (meilisearch) total-vm:3811220kB, "
          "anon-rss:1432116kB, file-rss:0kB, shmem-rss:0kB, UID:999 pgtables:3140kB oom_score_adj:0"),
        C("docker stats --no-stream", "CONTAINER ID   NAME      CPU %     MEM USAGE / LIMIT     MEM %\n"
          f"{noise.sha(r, 12)}   meili     88.21%    1.41GiB / 1.92GiB     73.4%\n{noise.sha(r, 12)}   web       "
          f"2.10%     212MiB / 1.92GiB      10.8%\n{noise.sha(r, 12)}   redis     0.31%     9.8MiB / 1.92GiB      0.5%"),
        A("Meilisearch's indexer is memory hungry on full reindexes. Typesense keeps the index in RAM but for 1,843 "
          "products it's about 60 MB, and it has typo tolerance and facets too. I'd move to Typesense rather than "
          "buying a bigger VPS."),
        U("ok go with typesense, remove meili completely"),
        C("pip install typesense==0.21.0", noise.pip_install(r, [("typesense", "0.21.0")])),
        C("python manage.py typesense_reindex", "collection products recreated\nimported 1843 documents in 2.4s"),
        C("pytest tests/test_search.py -q", noise.pytest_run(r, {"tests/test_search.py": 12})),
        C("git rm -r --cached deploy/meili && git commit -am 'search: replace Meilisearch with Typesense'",
          "[main 4e1a9b2] search: replace Meilisearch with Typesense\n 9 files changed, 141 insertions(+), 187 deletions(-)"),
        A("Product search now runs on Typesense 27 (container `typesense`, collection `products`, ~60 MB RAM) instead of "
          "Meilisearch, which was OOM-killed during reindexing on the 2 GB VPS. The Meilisearch service and "
          "`catalog/tasks.py` sync were removed; `python manage.py typesense_reindex` rebuilds the collection."),
    ], notes="search chain 3/3 (current): Typesense"))

    # -- errors -------------------------------------------------------------------------------------
    r = rng_for("shop-webhook-sig")
    tb = ("Internal Server Error: /webhooks/stripe/\nTraceback (most recent call last):\n"
          "  File \"/app/.venv/lib/python3.11/site-packages/django/core/handlers/exception.py\", line 55, in inner\n"
          "    response = get_response(request)\n"
          "  File \"/app/checkout/webhooks.py\", line 27, in stripe_webhook\n"
          "    event = stripe.Webhook.construct_event(payload, sig_header, settings.STRIPE_WEBHOOK_SECRET)\n"
          "  File \"/app/.venv/lib/python3.11/site-packages/stripe/_webhook.py\", line 26, in construct_event\n"
          "    WebhookSignature.verify_header(payload, sig_header, secret, tolerance)\n"
          "  File \"/app/.venv/lib/python3.11/site-packages/stripe/_webhook.py\", line 87, in verify_header\n"
          "    raise error.SignatureVerificationError(\n"
          "stripe._error.SignatureVerificationError: No signatures found matching the expected signature for payload")
    out.append(Spec("shop-webhook-sig", "claude", CWD, 300, [
        U(f"Orders stay 'pending' after payment. Sentry shows this on every webhook:\n\n{tb}"),
        C("sed -n 15,40p checkout/webhooks.py", noise.source_file(r, [
            "@csrf_exempt", "def stripe_webhook(request):", "    data = json.loads(request.body)",
            "    payload = json.dumps(data)", "    sig_header = request.META.get('HTTP_STRIPE_SIGNATURE')",
            "    event = stripe.Webhook.construct_event(payload, sig_header, settings.STRIPE_WEBHOOK_SECRET)"])),
        A("The signature is computed over the exact bytes Stripe sent. The view parses the body and re-serialises it "
          "with json.dumps, which changes whitespace and key order, so the HMAC never matches. Pass `request.body` as is."),
        C("stripe listen --forward-to localhost:8000/webhooks/stripe/",
          "> Ready! Your webhook signing secret is whsec_[REDACTED] (^C to quit)\n"
          "2025-01-19 10:14:02   --> checkout.session.completed [evt_1QiXk2]\n"
          "2025-01-19 10:14:02  <--  [200] POST http://localhost:8000/webhooks/stripe/ [evt_1QiXk2]"),
        C("pytest tests/test_webhooks.py -q", noise.pytest_run(r, {"tests/test_webhooks.py": 8})),
        A("Fixed: `checkout/webhooks.py` now verifies `request.body` (raw bytes) instead of a re-serialised json.dumps copy. "
          "`stripe listen` shows 200 for checkout.session.completed and orders move to 'paid'."),
    ], notes="error: Stripe SignatureVerificationError"))

    r = rng_for("shop-thumbs")
    tb = ("Traceback (most recent call last):\n"
          "  File \"/app/.venv/lib/python3.11/site-packages/PIL/JpegImagePlugin.py\", line 639, in _save\n"
          "    rawmode = RAWMODE[im.mode]\nKeyError: 'RGBA'\n\nThe above exception was the direct cause of the following "
          "exception:\n\nTraceback (most recent call last):\n  File \"/app/catalog/management/commands/rebuild_thumbnails.py\", "
          "line 38, in handle\n    thumb.save(out, 'JPEG', quality=82)\n  File \"/app/.venv/lib/python3.11/site-packages/PIL/Image.py\", "
          "line 2439, in save\n    save_handler(self, fp, filename)\nOSError: cannot write mode RGBA as JPEG")
    out.append(Spec("shop-thumbs", "codex", CWD, 380, [
        U("Product pages are slow on mobile, the images are 2-3 MB PNGs straight from suppliers. Generate proper "
          "thumbnails, ideally webp."),
        C("du -sh media/products && ls media/products | head -20", "2.7G\tmedia/products\n" + "\n".join(
            f"{r.choice(['SKU', 'MRN', 'WLC'])}-{r.randint(1000, 9999)}_{r.choice(['front', 'back', 'detail', 'pack'])}.png" for _ in range(20))),
        C("python manage.py rebuild_thumbnails", tb, failed=True),
        A("Supplier PNGs have an alpha channel and JPEG can't store it. I'll convert to RGB on a white background before "
          "saving JPEG, and write webp (which keeps alpha) as the main format with JPEG as fallback for old Safari."),
        C("python manage.py rebuild_thumbnails --format webp --sizes 320,640,1280",
          "processed 3912 images: 11736 thumbnails written, 0 errors\nmedia/thumbs: 2.7G -> 214M"),
        C("pytest tests/test_thumbnails.py -q", noise.pytest_run(r, {"tests/test_thumbnails.py": 5})),
        A("Thumbnails are generated as webp at 320/640/1280 px with `<picture>` JPEG fallback (RGBA flattened on white). "
          "media went from 2.7 GB to 214 MB of thumbnails."),
    ], notes="error: PIL cannot write mode RGBA as JPEG; command rebuild_thumbnails"))

    r = rng_for("shop-migration-conflict")
    out.append(Spec("shop-migration-conflict", "claude", CWD, 190, [
        U("Deploy failed after merging Lucía's branch, migrate refuses to run."),
        C("python manage.py migrate",
          "CommandError: Conflicting migrations detected; multiple leaf nodes in the migration graph: "
          "(0042_product_weight_grams, 0042_product_slug_unique in catalog).\nTo fix them run 'python manage.py "
          "makemigrations --merge'", failed=True),
        C("git log --oneline -8 -- catalog/migrations/", noise.git_log(r, [
            "catalog: add weight_grams for shipping", "catalog: unique product slug", "catalog: search vector",
            "merge branch 'lucia/shipping-weights'"], 8, NOW - timedelta(days=190))),
        A("Both branches added a 0042 migration. They touch different fields, so a merge migration is safe; no data migration needed."),
        C("python manage.py makemigrations --merge --noinput",
          "Merging catalog\n  Branch 0042_product_weight_grams\n    - Add field weight_grams to product\n"
          "  Branch 0042_product_slug_unique\n    - Alter field slug on product\n\n"
          "Created new merge migration /home/ana/src/shop/catalog/migrations/0043_merge_20250509_1012.py"),
        C("python manage.py migrate", "Running migrations:\n  Applying catalog.0042_product_slug_unique... OK\n"
          "  Applying catalog.0042_product_weight_grams... OK\n  Applying catalog.0043_merge_20250509_1012... OK"),
        A("Created catalog/migrations/0043_merge_20250509_1012.py to merge the two 0042 leaves; migrate runs. I also added "
          "`python manage.py makemigrations --check --dry-run` to CI so two leaves fail the PR instead of the deploy."),
    ], notes="error: Conflicting migrations detected; multiple leaf nodes"))

    r = rng_for("shop-redis-cache")
    start = NOW - timedelta(days=75)
    out.append(Spec("shop-redis-cache", "codex", CWD, 75, [
        U("Category pages do ~140 queries each. Add caching for the product listing fragments with Redis."),
        C("python manage.py shell -c \"from django.db import connection; ...\"", "queries: 143"),
        A("I'll use Django's built-in RedisCache backend (django.core.cache.backends.redis.RedisCache) and cache the "
          "rendered listing fragment per category+page+sort for 10 minutes, invalidated on product save."),
        C("pytest tests/test_catalog.py -q", noise.pytest_run(r, {"tests/test_catalog.py": 24}, failures=[(
            "tests/test_catalog.py::test_category_page_cached",
            "    def test_category_page_cached(client, category):\n>       resp = client.get(category.get_absolute_url())\n"
            "...\nE       redis.exceptions.ConnectionError: Error 111 connecting to localhost:6379. Connection refused.\n\n"
            ".venv/lib/python3.11/site-packages/redis/connection.py:357: ConnectionError")])),
        A("Tests hit a real Redis that isn't running locally. Tests should use LocMemCache; I'll override CACHES in "
          "shop/settings/test.py."),
        C("pytest -q", noise.pytest_run(r, TEST_FILES)),
        C("tail -n 30 logs/web.log", noise.app_log(r, "django.request", [
            "GET /c/{n}/ 200 {ms}ms cache=hit", "GET /c/{n}/?page=2 200 {ms}ms cache=miss", "GET /p/{id}/ 200 {ms}ms"],
            30, start)),
        A("Listing fragments are cached in Redis for 600 s (key `cat:<id>:<page>:<sort>`), cleared by a post_save "
          "signal on Product. Category pages went from 143 to 6 queries on a cache hit."),
    ], notes="redis cache; error: Error 111 connecting to localhost:6379"))

    r = rng_for("shop-email-tz")
    out.append(Spec("shop-email-tz", "claude", CWD, 15, [
        U("Customers in Madrid say the order confirmation email says they ordered at 08:14 when it was 09:14. "
          "Winter time thing?"),
        C("grep -n 'TIME_ZONE\\|USE_TZ' shop/settings/base.py", "58:TIME_ZONE = 'UTC'\n59:USE_TZ = True"),
        C("grep -rn 'created_at' templates/emails/", "templates/emails/order_confirmation.txt:4:Order placed: "
          "{{ order.created_at|date:'d/m/Y H:i' }}\ntemplates/emails/order_confirmation.html:22:<td>{{ order.created_at|date:'d/m/Y H:i' }}</td>"),
        A("Emails are rendered in a Celery worker, outside a request, so no timezone is activated and datetimes "
          "render in UTC. I'll activate the customer's timezone (default Europe/Madrid) around rendering with "
          "`timezone.override(order.customer.tz or 'Europe/Madrid')`."),
        C("pytest tests/test_emails.py -q", noise.pytest_run(r, {"tests/test_emails.py": 7})),
        A("Order confirmation emails now render times in the customer's timezone (Europe/Madrid by default) via "
          "timezone.override in `orders/emails.py::send_order_confirmation`; added a test for a December order at 09:14 CET."),
    ], notes="paraphrase target: emails show wrong hour"))

    # -- Spanish: coupon applied twice --------------------------------------------------------------
    r = rng_for("shop-cupon-es")
    out.append(Spec("shop-cupon-es", "claude", CWD_ES, 120, [
        U("Hola. Nos han llegado pedidos con el cupón BIENVENIDA10 aplicado dos veces: el descuento sale en 20% en "
          "vez de 10%. Pasa cuando el cliente hace doble clic en 'Aplicar'. ¿Lo miras?"),
        C("grep -n 'def apply_coupon' -A25 cart/services.py", noise.source_file(r, [
            "def apply_coupon(cart, code):", "    coupon = Coupon.objects.get(code__iexact=code, active=True)",
            "    if coupon in cart.coupons.all():", "        return cart", "    cart.coupons.add(coupon)",
            "    cart.discount += coupon.percent", "    cart.save()"])),
        A("Es una condición de carrera: dos peticiones leen el carrito a la vez, las dos ven que el cupón no está y "
          "las dos suman el descuento. Voy a bloquear la fila del carrito con select_for_update dentro de una "
          "transacción y recalcular el descuento a partir de los cupones en lugar de acumularlo."),
        C("pytest tests/test_coupons.py -q", noise.pytest_run(r, {"tests/test_coupons.py": 11}, failures=[(
            "tests/test_coupons.py::test_double_apply_concurrent",
            "E       AssertionError: assert Decimal('20.00') == Decimal('10.00')\n"
            "E        +  where Decimal('20.00') = <Cart 8812>.discount")])),
        C("pytest tests/test_coupons.py -q", noise.pytest_run(r, {"tests/test_coupons.py": 11})),
        A("Arreglado: `apply_coupon` en cart/services.py usa `transaction.atomic()` + `select_for_update()` sobre el "
          "carrito y el descuento se recalcula desde los cupones (ya no se suma). Además el botón 'Aplicar' se "
          "desactiva con hx-disabled-elt mientras la petición está en curso. He corregido a mano los 14 pedidos afectados."),
    ], lang="es", notes="Spanish: coupon applied twice (race condition)"))

    # -- long session: Black Friday load test ------------------------------------------------------
    out.append(_long_perf())
    return out


def _long_perf() -> Spec:
    r = rng_for("shop-loadtest-long")
    start = NOW - timedelta(days=95)
    endpoints = [("/", 120), ("/c/[slug]/", 900), ("/p/[slug]/", 260), ("/search?q=[q]", 180), ("/cart/", 90),
                 ("/checkout/", 310)]
    turns = [
        U("Black Friday is in a few weeks. Let's load test the shop with locust and find what breaks first. "
          "Staging mirrors prod (2 vCPU, 4 GB, gunicorn 3 sync workers)."),
        C("ls -la", noise.ls_la(r, FILES + ["locustfile.py"], "ana")),
        C("cat locustfile.py", noise.source_file(r, [
            "from locust import HttpUser, task, between", "", "class Shopper(HttpUser):", "    wait_time = between(1, 4)",
            "    @task(5)", "    def browse(self):", "        self.client.get('/c/socks/')", "    @task(3)",
            "    def product(self):", "        self.client.get('/p/merino-socks-grey/')", "    @task(1)",
            "    def search(self):", "        self.client.get('/search?q=wool')"])),
    ]
    for users in (50, 100, 200, 300):
        turns.append(C(f"locust -f locustfile.py --headless -u {users} -r 10 -t 10m --host https://staging.shop.internal",
                       noise.locust_table(r, endpoints, users)))
        turns.append(C("tail -n 60 /var/log/nginx/access.log",
                       noise.access_log(r, ["/", "/c/socks/", "/c/sweaters/", "/p/merino-socks-grey/", "/search?q=wool",
                                            "/static/css/app.css", "/cart/"], 60, start, slow=users / 100)))
        turns.append(A(f"At {users} users the category page is the slowest endpoint; median climbs with load while CPU "
                       "on the web container sits near 100%. Next step is to see where the time goes."))
    turns += [
        C("py-spy top --pid $(pgrep -f 'gunicorn: worker' | head -1) --duration 30",
          "\n".join(f"  {r.uniform(0.5, 30):5.2f}%  {r.uniform(0.5, 30):5.2f}%   {r.uniform(0.1, 9):.2f}s    "
                    f"{r.uniform(0.1, 9):.2f}s   {fn}" for fn in [
                        "execute (django/db/backends/utils.py)", "_execute (django/db/backends/utils.py)",
                        "render (django/template/base.py)", "__iter__ (django/db/models/query.py)",
                        "get_price (catalog/models.py)", "resolve (django/template/base.py)",
                        "_fetch_all (django/db/models/query.py)", "to_python (django/db/models/fields/__init__.py)"] * 3)),
        A("Most time is in the ORM and template rendering. Let me try more gunicorn workers first since it's cheap."),
        C("sed -i 's/--workers 3/--workers 9/' deploy/gunicorn.conf.py && docker compose up -d web", "Container shop-web-1  Started"),
        C("locust -f locustfile.py --headless -u 300 -r 10 -t 10m --host https://staging.shop.internal",
          noise.locust_table(r, endpoints, 300)),
        A("Nine workers made it worse on 4 GB: memory pressure and swapping. Reverting to workers=5."),
        C("python manage.py check --deploy", "System check identified some issues:\n\nWARNINGS:\n"
          "?: (security.W004) You have not set a value for the SECURE_HSTS_SECONDS setting.\n\n"
          "System check identified 1 issue (0 silenced)."),
    ]
    for i in range(9):
        turns.append(C(f"pytest tests/ -q -p no:randomly  # run {i + 1}", noise.pytest_run(r, TEST_FILES)))
        turns.append(C("tail -n 50 logs/web.log", noise.app_log(r, "django.db.backends", [
            "(0.00{n}) SELECT \"catalog_price\".\"id\", \"catalog_price\".\"amount\" FROM \"catalog_price\" WHERE "
            "\"catalog_price\".\"variant_id\" = {n}; args=({n},); alias=default",
            "(0.0{n}) SELECT \"catalog_variant\".\"id\" FROM \"catalog_variant\" WHERE \"catalog_variant\".\"product_id\" = {n}",
            "GET /c/socks/ 200 {ms}ms"], 50, start)))
        turns.append(A(r.choice([
            "Still the same pattern in the SQL log; keep digging.",
            "Tests pass; the query log is dominated by per-row price lookups.",
            "Nothing new here, the slow path is unchanged.",
        ])))
    turns += [
        C("python manage.py shell -c \"from catalog.debug import count_queries; count_queries('/c/socks/')\"",
          "GET /c/socks/ -> 386 queries (362 on catalog_price)"),
        A("Found it: the category template calls `variant.current_price` for each variant of each product, and each "
          "call runs a query on catalog_price. That's an N+1: 362 of 386 queries."),
        C("git diff catalog/views.py", "-    products = category.products.filter(active=True)\n"
          "+    products = (category.products.filter(active=True)\n"
          "+                .prefetch_related('variants__prices'))"),
        C("locust -f locustfile.py --headless -u 300 -r 10 -t 10m --host https://staging.shop.internal",
          noise.locust_table(r, [(n, b // 3 if 'c/' in n else b) for n, b in endpoints], 300)),
        A("Root cause of the Black Friday bottleneck: an N+1 on variant prices in the category page. With "
          "`prefetch_related('variants__prices')` in catalog/views.py the category page does 9 queries instead of 386 "
          "and its p95 at 300 users dropped from 2.8 s to 310 ms. Gunicorn stays at 5 workers (9 made it swap). "
          "We're fine for Black Friday on the current staging size."),
    ]
    return Spec("shop-loadtest-long", "claude", CWD, 95, turns, notes="LONG: load test; the fix (N+1, prefetch, 310 ms) is at the end",
                end_facts=["variants__prices", "310 ms"])
