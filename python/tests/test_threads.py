"""Single-state calls from many Python threads: one BLAS thread each, as the batch's."""

import threading
import time

import numpy as np

import mbdbench


def test_dense_from_eight_threads_scales() -> None:
    """OpenBLAS's OpenMP pool used every core for each small factorization of every thread:
    8 threads of 100 calls took 1500x one thread's 100 (chain:n=40,joint=cardan)."""
    model = mbdbench.Model("chain:n=40,joint=cardan")
    q, qd = model.neutral(), np.zeros(model.nv)

    def calls(count: int) -> None:
        for _ in range(count):
            model.forward(q, qd, solver="dense")

    calls(10)  # warm: the pool's workspace, OpenBLAS's buffers
    start = time.perf_counter()
    calls(800)
    alone = time.perf_counter() - start
    threads = [threading.Thread(target=calls, args=(100,)) for _ in range(8)]
    start = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    together = time.perf_counter() - start
    assert together < 2.0 * alone, f"8 threads x 100 calls: {together:.3f} s; one thread x 800: {alone:.3f} s"
