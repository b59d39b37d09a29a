"""Tripdata: a data pipeline for a city bike-share (trips, stations, weather), S3 + DuckDB + dbt."""

from __future__ import annotations

from datetime import timedelta

import tool_output as noise
from ._base import NOW, A, C, Spec, U, rng_for

CWD = "/home/ben/src/tripdata"
CWD_ES = "/home/marta/src/tripdata"


def specs() -> list[Spec]:
    out = []

    # -- decision chain: orchestration (cron -> Airflow -> Dagster) -----------------------------------
    r = rng_for("data-orch-1")
    out.append(Spec("data-orch-1", "codex", CWD, 520, [
        U("Schedule the nightly load: download yesterday's trips CSV from the operator's SFTP, clean it, load into "
          "the warehouse. Keep it simple."),
        C("cat scripts/run_nightly.sh", "#!/usr/bin/env bash\nset -euo pipefail\npython -m tripdata.fetch --date \"$(date -d yesterday +%F)\"\n"
          "python -m tripdata.clean\npython -m tripdata.load"),
        C("crontab -l", "# m h  dom mon dow   command\n0 2 * * * /opt/tripdata/scripts/run_nightly.sh >> /var/log/tripdata.log 2>&1"),
        A("The nightly load runs from cron at 02:00 on the etl VM (scripts/run_nightly.sh: fetch, clean, load), logging "
          "to /var/log/tripdata.log. Failures mail root through cron's MAILTO."),
    ], notes="orchestration chain 1/3: cron"))

    r = rng_for("data-orch-2")
    out.append(Spec("data-orch-2", "claude", CWD, 340, [
        U("The cron job failed silently for 5 nights (MAILTO went nowhere) and we have no way to rerun a single day. "
          "Let's use a real orchestrator."),
        A("Airflow gives retries, backfills per date and a UI with the run history. I'll run it with the official "
          "docker-compose (LocalExecutor, Postgres metadata DB) and turn run_nightly.sh into a DAG `tripdata_nightly` "
          "with three tasks."),
        C("docker compose -f airflow/docker-compose.yaml up -d", "[+] Running 5/5\n ✔ Container airflow-postgres-1  Healthy\n"
          " ✔ Container airflow-airflow-init-1  Exited\n ✔ Container airflow-airflow-scheduler-1  Started\n"
          " ✔ Container airflow-airflow-webserver-1  Started\n ✔ Container airflow-airflow-triggerer-1  Started"),
        C("docker compose exec airflow-scheduler airflow dags test tripdata_nightly 2025-12-01",
          noise.app_log(r, "airflow.task", ["Running <TaskInstance: tripdata_nightly.fetch 2025-12-01 [running]>",
                                             "Marking task as SUCCESS. dag_id=tripdata_nightly, task_id={id}",
                                             "rows={n} written to s3://tripdata-raw/trips/2025-12-01.csv"], 12, NOW - timedelta(days=340))),
        A("Airflow 2.9 (LocalExecutor, docker compose in airflow/) now runs the DAG tripdata_nightly at 02:00 with 3 "
          "retries; the crontab entry is removed. Backfill with `airflow dags backfill -s ... -e ...`."),
    ], notes="orchestration chain 2/3: Airflow"))

    r = rng_for("data-orch-3")
    out.append(Spec("data-orch-3", "claude", CWD, 35, [
        U("Airflow uses 2.5 GB of RAM on the etl VM to run one DAG a night, and nobody likes writing DAG files. "
          "Dagster keeps coming up. Would it fit better now that we model everything in dbt?"),
        A("It fits well: Dagster's software-defined assets map one-to-one to the dbt models through dagster-dbt, so "
          "lineage and freshness come from the dbt project itself; a single `dagster dev`-style deployment (webserver "
          "+ daemon) runs in about 400 MB."),
        U("go for it, migrate and shut airflow down"),
        C("uv add dagster dagster-webserver dagster-dbt dagster-duckdb", "Resolved 97 packages in 2.31s\n + dagster==1.8.12\n"
          " + dagster-dbt==0.24.12\n + dagster-duckdb==0.24.12\n + dagster-webserver==1.8.12"),
        C("dagster asset materialize -m tripdata_dagster --select '*'", noise.app_log(r, "dagster", [
            "ASSET_MATERIALIZATION - Materialized value stg_trips.", "STEP_SUCCESS - Finished execution of step \"dbt_models\" in {ms}ms.",
            "ASSET_MATERIALIZATION - Materialized value fct_daily_station_usage."], 14, NOW - timedelta(days=35))),
        C("docker compose -f airflow/docker-compose.yaml down -v", " ✔ Container airflow-airflow-webserver-1  Removed\n"
          " ✔ Container airflow-postgres-1  Removed\n ✔ Volume airflow_postgres-db-volume  Removed"),
        A("Orchestration moved from Airflow to Dagster 1.8: assets in tripdata_dagster/ (raw trips, weather, and the "
          "dbt models through dagster-dbt), schedule `nightly` at 02:00 with a freshness policy. Airflow is shut down; "
          "RAM on the etl VM went from 2.5 GB to ~400 MB."),
    ], notes="orchestration chain 3/3 (current): Dagster"))

    # -- errors -------------------------------------------------------------------------------------
    r = rng_for("data-arrow-schema")
    out.append(Spec("data-arrow-schema", "codex", CWD, 240, [
        U("Reading the trips dataset for the monthly report crashes since March."),
        C("python -m tripdata.report --month 2026-03", "Traceback (most recent call last):\n"
          "  File \"/home/ben/src/tripdata/tripdata/report.py\", line 22, in main\n    table = ds.dataset('s3://tripdata-clean/trips/', format='parquet').to_table()\n"
          "  File \"pyarrow/_dataset.pyx\", line 562, in pyarrow._dataset.Dataset.to_table\n"
          "  File \"pyarrow/error.pxi\", line 91, in pyarrow.lib.check_status\n"
          "pyarrow.lib.ArrowInvalid: Unable to merge: Field duration has incompatible types: int64 vs double", failed=True),
        C("python -c \"import pyarrow.parquet as pq; print(pq.read_schema('s3://tripdata-clean/trips/2026-03-02.parquet'))\"",
          "trip_id: string\nstarted_at: timestamp[us]\nended_at: timestamp[us]\nstart_station: int32\nend_station: int32\n"
          "duration: double\nbike_type: string"),
        A("Since March the operator sends duration with decimals ('612.0'), pandas infers float64 and the Parquet files "
          "from March on have `duration: double` while older ones have int64. Fix at the source: cast duration to int64 "
          "seconds in tripdata/clean.py with an explicit schema, and rewrite the March files."),
        C("python -m tripdata.rewrite --from 2026-03-01 --to 2026-03-31", "rewrote 31 files (duration -> int64)"),
        C("python -m tripdata.report --month 2026-03", "report written to reports/2026-03.html (1,214,332 trips)"),
        A("Fixed `ArrowInvalid: Unable to merge: Field duration has incompatible types: int64 vs double`: clean.py now "
          "writes with an explicit pyarrow schema (duration int64) and the 31 March files were rewritten."),
    ], notes="error: ArrowInvalid Unable to merge: Field duration"))

    r = rng_for("data-duckdb-memory")
    out.append(Spec("data-duckdb-memory", "claude", CWD, 130, [
        U("The yearly aggregation script dies on the 9 GB 2025 trips CSV. The VM has 8 GB of RAM."),
        C("python scripts/yearly_stats.py data/trips_2025.csv", "Traceback (most recent call last):\n"
          "  File \"scripts/yearly_stats.py\", line 11, in <module>\n    df = pd.read_csv(path, parse_dates=['started_at', 'ended_at'])\n"
          "  ...\nnumpy.core._exceptions._ArrayMemoryError: Unable to allocate 1.21 GiB for an array with shape (8, 20314112) and data type object",
          failed=True),
        A("pandas loads everything into memory with object columns for strings: ~4x the file size. DuckDB can aggregate "
          "straight from the CSV, streaming and spilling to disk if needed. Rewriting the script as SQL."),
        C("duckdb tripdata.duckdb -c \"SELECT start_station, count(*) AS trips, avg(duration) FROM read_csv_auto('data/trips_2025.csv') GROUP BY 1 ORDER BY 2 DESC LIMIT 5\"",
          "┌───────────────┬────────┬────────────────────┐\n│ start_station │ trips  │   avg(duration)    │\n"
          "├───────────────┼────────┼────────────────────┤\n│           112 │ 401223 │  734.1120918          │\n"
          "│            37 │ 377810 │  801.5540012          │\n│           209 │ 290114 │  655.90012            │\n"
          "└───────────────┴────────┴────────────────────┘\nRun Time (s): real 21.412 user 38.220 sys 3.104"),
        A("scripts/yearly_stats.py now runs the aggregation in DuckDB over read_csv_auto (21 s, peak RSS 1.1 GB) "
          "instead of pandas, which ran out of memory on the 9 GB CSV."),
    ], notes="error: Unable to allocate GiB pandas; DuckDB read_csv_auto"))

    r = rng_for("data-dbt-unique")
    out.append(Spec("data-dbt-unique", "codex", CWD, 70, [
        U("dbt build fails on a test this morning, the dashboards are stale."),
        C("dbt build --select staging", "\n".join([
            "12:04:11  Running with dbt=1.8.7", "12:04:12  Found 23 models, 61 data tests, 4 sources, 0 exposures",
            "12:04:14  1 of 9 START sql view model staging.stg_stations ..... [RUN]",
            "12:04:15  1 of 9 OK created sql view model staging.stg_stations  [OK in 0.31s]",
            "12:04:15  2 of 9 START sql table model staging.stg_trips ........ [RUN]",
            "12:04:41  2 of 9 OK created sql table model staging.stg_trips  [OK in 26.02s]",
            "12:04:42  3 of 9 START test unique_stg_trips_trip_id ............ [RUN]",
            "12:04:44  3 of 9 FAIL 37 unique_stg_trips_trip_id ............... [FAIL 37 in 2.10s]",
            "12:04:44  Failure in test unique_stg_trips_trip_id (models/staging/schema.yml)",
            "12:04:44    Got 37 results, configured to fail if != 0",
            "12:04:44  Done. PASS=7 WARN=0 ERROR=1 SKIP=1 TOTAL=9"]), failed=True),
        A("The operator re-sent the file for Sept 14th with corrections, and the loader appended it, so 37 trips appear "
          "twice. Deduplicate in stg_trips keeping the latest version of each trip_id."),
        C("dbt build --select staging", "12:31:02  Done. PASS=9 WARN=0 ERROR=0 SKIP=0 TOTAL=9"),
        A("stg_trips now keeps one row per trip_id (`qualify row_number() over (partition by trip_id order by "
          "_loaded_at desc) = 1`), so resent files no longer fail unique_stg_trips_trip_id."),
    ], notes="error: dbt unique test Got 37 results"))

    r = rng_for("data-dst-es")
    out.append(Spec("data-dst-es", "codex", CWD_ES, 8, [
        U("Desde el cambio de hora del domingo el cruce de viajes con el tiempo (temperatura, lluvia) da nulos para "
          "casi todas las filas de la madrugada. ¿Qué ha cambiado?"),
        C("duckdb tripdata.duckdb -c \"SELECT date_trunc('hour', started_at) h, count(*), count(temp_c) FROM fct_trips_weather WHERE started_at::date = '2026-10-25' GROUP BY 1 ORDER BY 1 LIMIT 6\"",
          "┌─────────────────────┬──────────────┬───────────────┐\n│          h          │ count_star() │ count(temp_c) │\n"
          "├─────────────────────┼──────────────┼───────────────┤\n│ 2026-10-25 00:00:00 │          412 │             0 │\n"
          "│ 2026-10-25 01:00:00 │          301 │             0 │\n│ 2026-10-25 02:00:00 │          388 │             0 │\n"
          "└─────────────────────┴──────────────┴───────────────┘"),
        A("Los viajes vienen en hora local sin zona (naive) y el tiempo de la API viene en UTC. Hasta ahora el desfase "
          "era constante y se compensaba con un `+ interval 2 hour` en el modelo; con el horario de invierno pasa a ser "
          "1 hora y la unión por hora deja de coincidir. Lo correcto es convertir los viajes a UTC con la zona "
          "Europe/Madrid antes de unir."),
        C("dbt build --select fct_trips_weather+", "13:02:11  Done. PASS=6 WARN=0 ERROR=0 SKIP=0 TOTAL=6"),
        A("Corregido: stg_trips convierte started_at/ended_at de Europe/Madrid a UTC (`timezone('Europe/Madrid', ...)`), "
          "quitado el `+ interval 2 hour` fijo de fct_trips_weather, y la hora ambigua del cambio (02:00-03:00) se "
          "resuelve con el orden de los viajes. Relanzado desde el 25 de octubre."),
    ], lang="es", notes="Spanish: weather join nulls after DST change"))

    out.append(_long_backfill())
    return out


def _long_backfill() -> Spec:
    r = rng_for("data-backfill-long")
    start = NOW - timedelta(days=150)
    turns = [
        U("Backfill the historical trips 2019-01 to 2024-12 from the operator's archive into s3://tripdata-clean as "
          "monthly Parquet, then run the dbt models over the whole range. Go month by month and report problems."),
        C("aws s3 ls s3://tripdata-archive/ --recursive --human-readable | head -40", "\n".join(
            f"2024-01-{r.randint(10, 28)} 0{r.randint(0, 9)}:{r.randint(10, 59)}:{r.randint(10, 59)}  {r.uniform(0.4, 2.9):.1f} GiB "
            f"trips/{y}/{y}-{m:02d}.csv.gz" for y in (2019, 2020, 2021) for m in range(1, 14) if m <= 12)),
    ]
    months = [(y, m) for y in range(2019, 2025) for m in range(1, 13)]
    for i, (y, m) in enumerate(months[:26]):
        rows = r.randint(900_000, 4_800_000)
        turns.append(C(f"python -m tripdata.backfill --month {y}-{m:02d}", noise.app_log(r, "tripdata.backfill", [
            f"downloading trips/{y}/{y}-{m:02d}.csv.gz", "chunk {n}: {n} rows cleaned", "dropped {n} rows with negative duration",
            "station id {n} unknown, mapped to NULL", f"writing s3://tripdata-clean/trips/{y}-{m:02d}.parquet",
            "upload part {n} done"], 45, start + timedelta(minutes=10 * i)) + f"\nmonth {y}-{m:02d}: {rows} rows OK"))
        turns.append(C(f"python -m tripdata.validate --month {y}-{m:02d}", "\n".join(
            f"check {c:<32} {'OK' if r.random() > 0.05 else 'WARN'}  {r.randint(0, 4000)}" for c in [
                "row_count_vs_archive", "null_trip_id", "negative_duration", "duration_over_24h", "unknown_start_station",
                "unknown_end_station", "started_before_month", "ended_after_month", "duplicate_trip_id", "bike_type_domain",
                "member_type_domain", "lat_lon_in_city_bbox", "schema_matches_v3", "parquet_row_groups", "s3_etag_matches",
                "started_at_monotonic_per_bike"] * 2) + f"\nvalidated s3://tripdata-clean/trips/{y}-{m:02d}.parquet"))
        if i % 5 == 4:
            turns.append(A(f"{i + 1} months done, no errors so far. Continuing."))
    turns += [
        C("python -m tripdata.backfill --month 2021-03", noise.app_log(r, "tripdata.backfill", [
            "downloading trips/2021/2021-03.csv.gz", "chunk {n}: {n} rows cleaned", "upload part {n} done"], 30, start) +
          "\nTraceback (most recent call last):\n  File \"/home/ben/src/tripdata/tripdata/backfill.py\", line 88, in upload\n"
          "    s3.upload_file(path, bucket, key, Config=transfer_config)\n  ...\n"
          "botocore.exceptions.ClientError: An error occurred (InvalidArgument) when calling the UploadPart operation: "
          "Part number must be an integer between 1 and 10000, inclusive", failed=True),
        A("2021-03 is the first month where we write a single uncompressed staging file before converting (the "
          "archive for that month is one 58 GB file). boto3 would default to 8 MiB parts, but our TransferConfig sets "
          "multipart_chunksize to 5 MiB, so 58 GB needs ~11,900 parts, over S3's 10,000-part limit."),
        C("grep -n 'TransferConfig' -A4 tripdata/backfill.py", "41:transfer_config = TransferConfig(\n42:    multipart_threshold=5 * MiB,\n"
          "43:    multipart_chunksize=5 * MiB,\n44:    max_concurrency=8,\n45:)"),
        C("sed -i 's/multipart_chunksize=5 \\* MiB/multipart_chunksize=64 * MiB/' tripdata/backfill.py && python -m tripdata.backfill --month 2021-03",
          "month 2021-03: 6,118,402 rows OK (uploaded in 934 parts)"),
    ]
    for (y, m) in months[27:]:
        turns.append(C(f"python -m tripdata.backfill --month {y}-{m:02d}", f"month {y}-{m:02d}: {r.randint(900_000, 4_800_000)} rows OK"))
    turns += [
        C("dbt build --full-refresh", "\n".join([
            "08:02:11  Running with dbt=1.8.7", "08:02:12  Found 23 models, 61 data tests, 4 sources",
            "09:47:40  Done. PASS=84 WARN=0 ERROR=0 SKIP=0 TOTAL=84"])),
        A("Backfill finished: 72 months, 2019-01 to 2024-12, 412,883,120 trips in s3://tripdata-clean, total 6 h 41 min. "
          "The only failure was 2021-03: S3 rejected the upload because 5 MiB parts made a 58 GB file need more than "
          "10,000 parts (`Part number must be an integer between 1 and 10000`). multipart_chunksize in the boto3 "
          "TransferConfig (tripdata/backfill.py) is now 64 MiB. dbt full refresh passed, 84 nodes."),
    ]
    return Spec("data-backfill-long", "claude", CWD, 150, turns,
                notes="LONG: historical backfill; the S3 10,000-part failure and 64 MiB chunk fix are at the end",
                end_facts=["Part number must be", "multipart_chunksize", "412,883,120"])
