"""Suite-wide set-up that only saves time (no test depends on it for its result).

- Bytecode on: where the environment sets ``PYTHONDONTWRITEBYTECODE`` (these machines do), every process the suite
  starts (app servers, CLI runs) would compile the project's modules from source again, and pytest would rewrite
  the test modules' asserts again on every run.
- The serving step loop compiled once, by one background process started before the workers collect, instead of by
  each worker and each app server that asks a serving question before numba's on-disk cache exists (~34 s of CPU
  each on a clean clone, gpuplan_core/common/jit.py). Each worker waits for it before its first test; where the
  cache exists it is read back in a few seconds, within the workers' collection.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
WARM_DONE = "GPUPLAN_TEST_WARM_DONE"  # the file the background compile writes when it ends (success or not)
WARM = (
    "import sys\n"
    "try:\n"
    "    from gpuplan_core.perf.simulate import warm\n"
    "    warm()\n"
    "finally:\n"
    "    open(sys.argv[1], 'w').close()\n"
)


def pytest_configure(config) -> None:
    sys.dont_write_bytecode = False
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    if hasattr(config, "workerinput") or WARM_DONE in os.environ or os.environ.get("GPUPLAN_NO_NUMBA"):
        return  # a worker (the controller started the compile), or nothing to compile
    done = Path(tempfile.mkdtemp(prefix="gpuplan-warm-")) / "done"
    os.environ[WARM_DONE] = str(done)  # inherited by the workers, started after this hook
    subprocess.Popen(
        [sys.executable, "-c", WARM, str(done)],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )


def pytest_unconfigure(config) -> None:
    if not hasattr(config, "workerinput") and (done := os.environ.get(WARM_DONE)):
        shutil.rmtree(Path(done).parent, ignore_errors=True)  # the marker's folder (the compile may still write it)


@pytest.fixture(scope="session", autouse=True)
def _step_loop_compiled() -> None:
    """Wait (at most 3 minutes) for the background compile; a failed one leaves each process to compile its own."""
    done = os.environ.get(WARM_DONE)
    end = time.time() + 180
    while done and not Path(done).exists() and time.time() < end:
        time.sleep(0.2)
