"""What the agent plugins' hooks run: `python3 -I -S jezero_hook.py EVENT --agent AGENT` does what
`jezero_client.py hook EVENT --agent AGENT` does, and starts faster.

Python compiles the file it is told to run on every start (the client core: about 20 ms, a fifth
of a hook) and keeps the compiled form only of the modules it imports. So this file only imports
the core beside it, whose compiled form then waits in __pycache__/ for the next hook (a folder it
cannot write to means compiling each time, as before). The flags: -I keeps the agent's PYTHONPATH,
PYTHON* variables and the user's site-packages out (a project's own queue.py must not stand in for
the standard one), -S skips site-packages and the .pth files they run, which the standard-library
core never needs. Edit clients/core/, never a copy (scripts/build_clients.py).
"""

import os
import sys
import time

STARTED = time.monotonic()  # the hook's 2.5 s count from here, before the core is imported
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # -I leaves this folder out

import jezero_client  # noqa: E402

if __name__ == "__main__":
    sys.exit(jezero_client.hook_main(sys.argv[1:], STARTED))
