#!/usr/bin/python3
"""The Python package's targets (issue #35), measured side by side with the C calls:

1. model.forward's per-call overhead over mbd_forward (chain of 10 revolute bodies);
2. forward_batch on K = 1024 states against mbd_batch_forward per state, one thread;
3. two Python threads each running forward_batch(threads=1) against one.

The C side is timed by the extension itself (Model._time_forward, _time_forward_batch: the
same library build, looped in C), so that the difference is the Python layer alone. 1 and
2 are the calling thread's cpu time (time.thread_time; CLOCK_THREAD_CPUTIME_ID in C),
which other processes on a loaded machine do not inflate; 3 is wall time, which they do:
it needs two idle cores. Each figure is the best of several rounds.
Usage: PYTHONPATH=python /usr/bin/python3 python/bench_overhead.py
"""

import os
import threading
import time

import numpy as np

import mbdbench

ROUNDS = 7


def best(f):
    return min(f() for _ in range(ROUNDS))


def per_call(f, n):
    def run():
        start = time.thread_time()
        for _ in range(n):
            f()
        return (time.thread_time() - start) / n
    return best(run)


def forward_overhead(model, solver, n=20000):
    rng = np.random.default_rng(1)
    q, qd, tau = (rng.uniform(-1, 1, model.nv) for _ in range(3))
    python = per_call(lambda: model.forward(q, qd, tau, solver=solver), n)
    c = best(lambda: model._time_forward(q, qd, tau, solver, n))
    return python, c


def batch_per_state(model, solver, K=1024, n=50):
    rng = np.random.default_rng(2)
    Q, QD, TAU = (rng.uniform(-1, 1, (K, model.nv)) for _ in range(3))
    python = per_call(lambda: model.forward_batch(Q, QD, TAU, solver=solver, threads=1), n) / K
    c = best(lambda: model._time_forward_batch(Q, QD, TAU, solver, 1, n)) / K
    return python, c


def two_threads_speedup(model, solver, K=1024, n=100):
    rng = np.random.default_rng(3)
    Q, QD, TAU = (rng.uniform(-1, 1, (K, model.nv)) for _ in range(3))

    def work():
        for _ in range(n):
            model.forward_batch(Q, QD, TAU, solver=solver, threads=1)

    def wall(nthreads):
        threads = [threading.Thread(target=work) for _ in range(nthreads)]
        start = time.perf_counter()
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        return time.perf_counter() - start

    one, two = best(lambda: wall(1)), best(lambda: wall(2))
    return 2 * one / two  # states per second with two threads over one


def main():
    model = mbdbench.Model("chain:n=10,joint=revolute")
    load = os.getloadavg()[0]
    print(f"chain:n=10, {os.cpu_count()} cores, load average {load:.1f} at the start")
    for solver in ("dense", "bodies"):
        python, c = forward_overhead(model, solver)
        print(f"forward ({solver}): Python {1e9 * python:7.0f} ns, C {1e9 * c:7.0f} ns, "
              f"overhead {1e9 * (python - c):5.0f} ns per call (target <= 1000)")
    for solver in ("dense", "bodies"):
        python, c = batch_per_state(model, solver)
        print(f"forward_batch ({solver}, K = 1024, 1 thread): Python {1e9 * python:6.1f} ns, "
              f"C {1e9 * c:6.1f} ns per state, {100 * (python / c - 1):+.1f}% (target <= +10%)")
    speedup = two_threads_speedup(model, "bodies")
    print(f"two Python threads x forward_batch(threads=1): {speedup:.2f}x one thread "
          f"(target >= 1.6 on 2 idle cores)")


if __name__ == "__main__":
    main()
