"""numpy's BLAS thread pool, kept to one thread in a process that runs the embedding model.

A search runs the model (onnxruntime, its own pool of ``embedding.THREADS``) and then one matrix-vector
product over every paragraph vector (numpy's BLAS). OpenBLAS starts a thread per core for that product, and
on a busy two-core host its threads and onnxruntime's fought for the same cores: a 3,680 x 384 matvec that
takes 0.05 ms alone took 7.7-12.7 ms right after a model run, and the 100x search p95 missed its target.
A matvec reads memory once; a second thread barely speeds it up on two cores, so one thread it is. The
limit is process-wide and set once, when the model loads (a limit taken and given back around each scan
would race between the bot's lookup threads, and measured the same: docs/search.md).
"""

from __future__ import annotations

import logging
import threading

from threadpoolctl import threadpool_info, threadpool_limits

log = logging.getLogger("index")

BLAS_THREADS = 1
_done = False
_lock = threading.Lock()


def limit_blas() -> None:
    """Limit the BLAS libraries numpy has loaded to ``BLAS_THREADS``, once per process; never raises."""
    global _done
    with _lock:
        if _done:
            return
        try:
            threadpool_limits(BLAS_THREADS, user_api="blas")
        except Exception as exc:  # an unknown BLAS build: slower on a busy host, still correct
            log.info("BLAS threads not limited (%s: %s)", type(exc).__name__, exc)
        _done = True


def blas_threads() -> list[int]:
    """The thread count of each BLAS library loaded in this process (for ``Engine.stats`` and tests)."""
    return [int(lib["num_threads"]) for lib in threadpool_info() if lib.get("user_api") == "blas"]
