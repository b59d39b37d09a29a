"""The docs that are generated from the code stay in step with it."""

import subprocess
import sys

from jz_support import REPO


def test_cli_reference_is_up_to_date():
    proc = subprocess.run([sys.executable, str(REPO / "scripts" / "gen_cli_docs.py"), "--check"],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
