import sys

if getattr(sys.modules.get("jezero_store_postgres"), "__file__", None) is None:
    # The suite's "core alone" run: this distribution is not installed, so nothing here applies.
    collect_ignore_glob = ["test_*.py"]
