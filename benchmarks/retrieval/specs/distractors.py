"""Everyday sessions of the same projects that no labelled query is about, written
to share vocabulary with the labelled ones: another Stripe change, another disk full, another
Celery job, another dbt model, another Cranelift change. They are what makes a ranking earn its
first place."""

from __future__ import annotations

import tool_output as noise
from . import billing, data, infra, mobile, plume, shop
from ._base import A, C, Spec, U, rng_for


def specs() -> list[Spec]:
    out = []

    # -- shop -----------------------------------------------------------------------------------------
    r = rng_for("shop-apple-pay")
    out.append(Spec("shop-apple-pay", "claude", shop.CWD, 330, [
        U("Add Apple Pay and Google Pay to checkout. We use Stripe Checkout sessions today."),
        A("Stripe's Payment Element shows wallets automatically once the domain is verified for Apple Pay. I'll keep "
          "Checkout sessions for now and just enable wallets in the dashboard, then register the domain."),
        C("curl -s https://shop.example.es/.well-known/apple-developer-merchantid-domain-association | head -c 80",
          "7B227073704964223A2239373943394538343346343131343044463144313834343232393232393731324"),
        C("stripe payment_method_domains create --domain-name shop.example.es",
          '{\n  "id": "pmd_1Q8xYz",\n  "object": "payment_method_domain",\n  "apple_pay": {"status": "active"},\n'
          '  "domain_name": "shop.example.es",\n  "google_pay": {"status": "active"}\n}'),
        C("pytest tests/test_checkout.py -q", noise.pytest_run(r, {"tests/test_checkout.py": 18})),
        A("Apple Pay and Google Pay are live in Stripe Checkout: domain shop.example.es registered as a payment method "
          "domain, association file served from static/.well-known/. No code change in checkout/ besides the file."),
    ], notes="distractor: Stripe, checkout"))

    r = rng_for("shop-docker-slim")
    out.append(Spec("shop-docker-slim", "codex", shop.CWD, 210, [
        U("The shop image is 1.4 GB and deploys take ages to pull. Make it smaller."),
        C("docker images shop", "REPOSITORY   TAG       IMAGE ID       CREATED        SIZE\nshop         latest    "
          f"{noise.sha(r, 12)}   2 hours ago    1.41GB"),
        C("docker build -t shop:slim -f Dockerfile .", noise.docker_build(r, [
            "FROM python:3.11-slim AS build", "RUN apt-get update && apt-get install -y build-essential libpq-dev",
            "COPY pyproject.toml uv.lock ./", "RUN uv sync --frozen --no-dev", "FROM python:3.11-slim",
            "RUN apt-get update && apt-get install -y libpq5 && rm -rf /var/lib/apt/lists/*",
            "COPY --from=build /app/.venv /app/.venv", "COPY . /app", "RUN python manage.py collectstatic --noinput"], "shop:slim")),
        C("docker images shop", "REPOSITORY   TAG       IMAGE ID       CREATED          SIZE\nshop         slim      "
          f"{noise.sha(r, 12)}   10 seconds ago   212MB"),
        A("Multi-stage Dockerfile: build tools only in the build stage, runtime has libpq5 only. 1.41 GB -> 212 MB."),
    ], notes="distractor: docker build"))

    r = rng_for("shop-sitemap")
    out.append(Spec("shop-sitemap", "claude", shop.CWD, 60, [
        U("SEO person asks for a sitemap.xml with all products and categories, and canonical URLs on filtered "
          "category pages."),
        C("python manage.py shell -c \"from catalog.models import Product; print(Product.objects.filter(active=True).count())\"", "1843"),
        A("Using django.contrib.sitemaps with ProductSitemap and CategorySitemap, cached for an hour in Redis, and a "
          "<link rel=canonical> without query string on category pages."),
        C("curl -s localhost:8000/sitemap.xml | head -5", '<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n'
          "<url><loc>https://shop.example.es/p/merino-socks-grey/</loc><lastmod>2026-09-11</lastmod></url>"),
        C("pytest tests/test_catalog.py -q", noise.pytest_run(r, {"tests/test_catalog.py": 25})),
        A("sitemap.xml lists 1,843 products and 37 categories (shop/sitemaps.py), cached in Redis; canonical links added."),
    ], notes="distractor: catalog, redis"))

    # -- billing --------------------------------------------------------------------------------------
    r = rng_for("billing-celery-beat")
    out.append(Spec("billing-celery-beat", "codex", billing.CWD, 450, [
        U("Generate monthly invoices automatically on the 1st at 06:00 Madrid time, instead of Marta clicking the "
          "button in the admin."),
        A("A Celery beat entry with a crontab schedule; timezone Europe/Madrid in the Celery config so 06:00 follows DST."),
        C("grep -n 'beat_schedule' -A8 app/celery_config.py", "12:beat_schedule = {\n13:    'sync-stripe-customers': {\n"
          "14:        'task': 'invoices.tasks.sync_stripe_customer',\n15:        'schedule': crontab(minute=0),\n16:    },\n17:}"),
        C("pytest tests/services/test_payments.py -q -k monthly", noise.pytest_run(r, {"tests/services/test_payments.py": 4}, plugins=billing.PLUGINS)),
        A("Monthly invoices are generated by `invoices.tasks.generate_monthly_invoices`, scheduled by Celery beat at 06:00 "
          "Europe/Madrid on day 1 (app/celery_config.py). Idempotent per customer and month."),
    ], notes="distractor: celery, invoices"))

    r = rng_for("billing-csv-export")
    out.append(Spec("billing-csv-export", "claude", billing.CWD, 240, [
        U("The 'export all invoices as CSV' endpoint times out for our biggest customer (80k invoices). 504 after 60 s."),
        C("curl -s -o /dev/null -w '%{http_code} %{time_total}\\n' -H 'Authorization: Bearer $TOKEN' "
          "'https://api.example.es/v1/invoices/export?customer=cus_big'", "504 60.012"),
        A("The endpoint builds the whole CSV in memory and the ingress cuts at 60 s. Stream it: StreamingResponse over a "
          "server-side cursor (yield_per 1000), so the first bytes go out immediately."),
        C("pytest tests/api/test_invoices.py -q -k export", noise.pytest_run(r, {"tests/api/test_invoices.py": 5}, plugins=billing.PLUGINS)),
        A("/v1/invoices/export now streams (StreamingResponse + yield_per(1000)); 80k invoices export in 14 s with "
          "constant memory."),
    ], notes="distractor: invoices, timeout"))

    r = rng_for("billing-pg16")
    out.append(Spec("billing-pg16", "claude", billing.CWD, 390, [
        U("Upgrade the billing database from Postgres 14 to 16. Downtime window is Sunday night, 30 minutes."),
        C("pg_upgrade --old-bindir /usr/lib/postgresql/14/bin --new-bindir /usr/lib/postgresql/16/bin "
          "--old-datadir /var/lib/postgresql/14/main --new-datadir /var/lib/postgresql/16/main --check",
          "Performing Consistency Checks\n-----------------------------\nChecking cluster versions                                   ok\n"
          "Checking database user is the install user                  ok\nChecking for prepared transactions                          ok\n"
          "Checking for new cluster tablespace directories             ok\n\n*Clusters are compatible*"),
        C("pg_upgrade --link ... && ./analyze_new_cluster.sh", "Upgrade Complete\n----------------\n"
          "Optimizer statistics are not transferred by pg_upgrade.\nvacuumdb: processing database \"billing\": Generating minimal optimizer statistics (1 target)"),
        A("Upgraded billing to Postgres 16 with pg_upgrade --link: 4 minutes of downtime, statistics rebuilt with "
          "vacuumdb --analyze-in-stages."),
    ], notes="distractor: postgres"))

    # -- infra ----------------------------------------------------------------------------------------
    r = rng_for("infra-runner-enospc")
    out.append(Spec("infra-runner-enospc", "codex", infra.CWD, 270, [
        U("CI red on every repo: docker build fails on the self-hosted runner with no space left."),
        C("docker build -t billing-api:ci .", noise.docker_build(r, ["FROM python:3.11-slim", "COPY . /app",
                                                                       "RUN uv sync --frozen"], "billing-api:ci",
          tail="ERROR: failed to solve: failed to copy files: copy file range failed: write "
               "/var/lib/docker/overlay2/x1/diff/app/.venv/lib/libarrow.so: no space left on device"), failed=True),
        C("ssh ax41 df -h /", "Filesystem      Size  Used Avail Use% Mounted on\n/dev/md2        476G  476G     0 100% /"),
        C("ssh ax41 'docker system prune -af --volumes'", "Deleted build cache objects:\n" + "\n".join(noise.sha(r, 25) for _ in range(12)) +
          "\n\nTotal reclaimed space: 388.2GB"),
        A("Reclaimed 388 GB of build cache on the AX41 runner and added a nightly `docker system prune -af "
          "--filter until=72h` systemd timer."),
    ], notes="distractor: no space left on device (docker, not Postgres)"))

    r = rng_for("infra-nginx-502")
    out.append(Spec("infra-nginx-502", "claude", infra.CWD, 400, [
        U("Shop returns 502 Bad Gateway for a few seconds on every deploy."),
        C("tail -n 5 /var/log/nginx/error.log", "2025-10-12 10:01:13 [error] 812#812: *4411 connect() failed (111: Connection refused) "
          "while connecting to upstream, client: 10.0.4.7, server: shop.example.es, request: \"GET / HTTP/1.1\", "
          "upstream: \"http://127.0.0.1:8000/\"\n" * 3),
        A("The deploy restarts gunicorn with `docker compose up -d`, and nginx has no second upstream while the new "
          "container boots. Blue/green with two upstreams and `proxy_next_upstream error` removes the gap."),
        C("nginx -t && systemctl reload nginx", "nginx: the configuration file /etc/nginx/nginx.conf syntax is ok\n"
          "nginx: configuration file /etc/nginx/nginx.conf test is successful"),
        A("Zero-downtime deploys: two web containers (8000, 8001) restarted one at a time, nginx upstream with both and "
          "proxy_next_upstream error timeout."),
    ], notes="distractor: connection refused, deploy"))

    r = rng_for("infra-grafana-es")
    out.append(Spec("infra-grafana-es", "claude", infra.CWD_ES, 180, [
        U("Quiero que las alertas de Grafana lleguen a un grupo de Telegram en vez de al correo, que nadie lo mira."),
        A("Grafana tiene un contact point de tipo Telegram: hace falta el token del bot (en un Secret) y el chat id del "
          "grupo. Lo añado por provisioning para que quede en el repositorio."),
        C("kubectl -n monitoring apply -f k8s/grafana/contact-points.yaml && kubectl -n monitoring rollout restart deploy grafana",
          "configmap/grafana-alerting configured\ndeployment.apps/grafana restarted"),
        C("curl -s -X POST localhost:3000/api/alertmanager/grafana/config/api/v1/receivers/test -d @test.json",
          '{"notified":["telegram-ops"],"status":"ok"}'),
        A("Las alertas de Grafana van ahora al grupo de Telegram 'ops' (contact point telegram-ops, provisionado en "
          "k8s/grafana/contact-points.yaml). El correo queda solo para alertas críticas."),
    ], lang="es", notes="distractor (Spanish): Grafana alerts to Telegram"))

    r = rng_for("infra-firewall-tf")
    out.append(Spec("infra-firewall-tf", "codex", infra.CWD, 95, [
        U("Close SSH to the world on the Hetzner servers; only from the office IP and the VPN."),
        C("terraform plan", noise.terraform_plan(r, [("hcloud_firewall.web", "update"), ("hcloud_firewall.db", "update"),
                                                     ("hcloud_firewall_attachment.all", "create")])),
        C("terraform apply -auto-approve", "hcloud_firewall.web: Modifying... [id=1190224]\nhcloud_firewall.web: Modifications complete after 1s\n"
          "Apply complete! Resources: 1 added, 2 changed, 0 destroyed."),
        A("SSH (22/tcp) is now allowed only from the office IP and the WireGuard range in hcloud_firewall.web and .db."),
    ], notes="distractor: terraform"))

    # -- mobile ---------------------------------------------------------------------------------------
    r = rng_for("mobile-appstore-reject")
    out.append(Spec("mobile-appstore-reject", "claude", mobile.CWD, 300, [
        U("App Store rejected build 1.8.0: 'ITMS-90683: Missing purpose string in Info.plist'. We added location for "
          "'nearest spot'."),
        A("iOS requires NSLocationWhenInUseUsageDescription when the binary links location APIs. With Expo it goes in "
          "app.json under ios.infoPlist, or through the expo-location config plugin's locationWhenInUsePermission."),
        C("npx expo config --type introspect | grep -A2 NSLocation", "      NSLocationWhenInUseUsageDescription: "
          "'Tidepool uses your location to show the nearest surf spots.'"),
        C("eas build --platform ios --profile production && eas submit -p ios --latest", "✔ Build finished\n✔ Submitted your app to Apple App Store Connect!"),
        A("Added the location purpose string via the expo-location plugin; build 1.8.1 submitted and approved the next day."),
    ], notes="distractor: iOS build, app.json"))

    r = rng_for("mobile-notif-icon")
    out.append(Spec("mobile-notif-icon", "codex", mobile.CWD, 240, [
        U("On Android the swell alert notification shows a white square instead of our icon."),
        A("Android draws the small notification icon as a white silhouette from the alpha channel; a full-colour "
          "square PNG becomes a white square. Needs a monochrome icon with transparency, set in app.json."),
        C("npx expo prebuild --platform android", "✔ Created native directory\n✔ Config synced"),
        A("Added assets/notification-icon.png (white on transparent, 96x96) and `notification.icon` + color #0A6E8A in app.json."),
    ], notes="distractor: push notifications, android"))

    r = rng_for("mobile-jest-esm")
    out.append(Spec("mobile-jest-esm", "claude", mobile.CWD, 130, [
        U("Tests broke after adding victory-native for charts."),
        C("npx jest", noise.jest_run(r, mobile.SUITES[:5], failing=[("src/screens/__tests__/TideChart.test.tsx",
            "Test suite failed to run\nJest encountered an unexpected token\n\nDetails:\n\n"
            "    /home/carla/src/tidepool/node_modules/victory-native/src/index.ts:1\n"
            "    export * from \"./cartesian/CartesianChart\";\n    ^^^^^^\n\n    SyntaxError: Unexpected token 'export'")])),
        A("victory-native ships untranspiled TypeScript/ESM; jest-expo only transforms a known list of node_modules. "
          "Add it to transformIgnorePatterns."),
        C("npx jest", noise.jest_run(r, mobile.SUITES)),
        A("Added victory-native and @shopify/react-native-skia to transformIgnorePatterns in jest.config.js; all suites pass."),
    ], notes="distractor: tide chart tests"))

    # -- data -----------------------------------------------------------------------------------------
    r = rng_for("data-gbfs")
    out.append(Spec("data-gbfs", "codex", data.CWD, 280, [
        U("Also ingest station status (bikes available, docks) every 5 minutes from the operator's GBFS feed."),
        C("curl -s https://gbfs.operator.example/gbfs/2.3/station_status.json | head -c 300",
          '{"last_updated":1735900000,"ttl":60,"version":"2.3","data":{"stations":[{"station_id":"112",'
          '"num_bikes_available":7,"num_docks_available":12,"is_renting":true}'),
        A("A small poller writes one Parquet file per hour partition to s3://tripdata-raw/station_status/ and "
          "a dbt source reads it."),
        C("python -m tripdata.gbfs --once", "stations=238 written=s3://tripdata-raw/station_status/2025-02-07/10.parquet"),
        A("Station status is polled every 5 min (tripdata/gbfs.py), hourly Parquet partitions in S3, dbt source `gbfs`."),
    ], notes="distractor: S3, parquet"))

    r = rng_for("data-dbt-incremental")
    out.append(Spec("data-dbt-incremental", "claude", data.CWD, 100, [
        U("fct_daily_station_usage rebuilds 400M rows every night, 40 minutes. Make it incremental."),
        C("dbt build --select fct_daily_station_usage", "\n".join([
            "07:12:11  Running with dbt=1.8.7", "07:12:12  1 of 1 START sql table model marts.fct_daily_station_usage [RUN]",
            "07:52:40  1 of 1 OK created sql table model marts.fct_daily_station_usage [OK in 2428.10s]"])),
        A("materialized='incremental' with unique_key (station_id, day) and a 3-day lookback on _loaded_at, so late "
          "files are picked up."),
        C("dbt build --select fct_daily_station_usage", "08:01:02  1 of 1 OK created sql incremental model "
          "marts.fct_daily_station_usage [INSERT 0 5712 in 31.22s]"),
        A("fct_daily_station_usage is incremental (merge on station_id, day; 3-day lookback): nightly 40 min -> 31 s."),
    ], notes="distractor: dbt build"))

    r = rng_for("data-s3-lifecycle")
    out.append(Spec("data-s3-lifecycle", "codex", data.CWD, 420, [
        U("The raw bucket costs keep growing. Raw CSVs are never read after they're cleaned into Parquet."),
        C("aws s3 ls s3://tripdata-raw --recursive --summarize | tail -2", "Total Objects: 48211\n   Total Size: 2.1 TiB"),
        C("aws s3api put-bucket-lifecycle-configuration --bucket tripdata-raw --lifecycle-configuration file://infra/s3-lifecycle.json", ""),
        A("Raw objects go to Glacier Instant Retrieval after 30 days and are deleted after 400 days (infra/s3-lifecycle.json)."),
    ], notes="distractor: S3"))

    # -- plume ----------------------------------------------------------------------------------------
    r = rng_for("plume-tailcall")
    out.append(Spec("plume-tailcall", "claude", plume.CWD, 120, [
        U("Recursive loops in plume blow the stack at ~100k iterations. Do tail calls in the Cranelift backend."),
        C("./target/release/plume run examples/count.pl", "thread 'main' has overflowed its stack\nfatal runtime error: stack overflow", failed=True),
        A("Cranelift supports tail calls with the `tail` calling convention (`return_call`). Self tail calls can also "
          "be lowered to a jump to the function's entry block; I'll do the general return_call."),
        C("cargo test --workspace tail_call", noise.cargo_test(r, "plume-codegen", ["codegen::tests::tail_call_loop",
                                                                                   "codegen::tests::tail_call_mutual"])),
        A("Tail calls are emitted as Cranelift `return_call` with CallConv::Tail; count to 10 million runs in constant stack."),
    ], notes="distractor: Cranelift"))

    r = rng_for("plume-diagnostics")
    out.append(Spec("plume-diagnostics", "codex", plume.CWD, 160, [
        U("Type errors print 'mismatch Int Str' with no location. Make diagnostics look like rustc's."),
        C("cargo add codespan-reporting -p plume-types", "      Adding codespan-reporting v0.11.1 to dependencies"),
        C("./target/debug/plume check examples/bad.pl", "error[T0003]: type mismatch\n  ┌─ examples/bad.pl:3:13\n  │\n"
          "3 │ let x = 1 + \"a\" in x\n  │             ^^^ expected `Int`, found `Str`"),
        A("Type errors are reported with codespan-reporting: error codes T0001-T0009, primary span, expected/found labels."),
    ], notes="distractor: parser/type errors"))
    return out
