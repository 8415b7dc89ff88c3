"""Where a study's cells run: in this process (``--workers 0``), in a pool of spawned worker
processes, or on a Ray cluster; each with its thread count set before numpy or torch load, and
stopped together (SIGTERM, then SIGKILL after a grace period) when the study stops."""
import os
import signal
import threading
import time
from concurrent.futures import Future, ProcessPoolExecutor
from contextlib import contextmanager
from multiprocessing import get_context
from typing import Dict, Iterator, Optional

from .cells import Cell
from .execution import StudyError, execute_cell, init_worker

_THREAD_VARS = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS", "NUMEXPR_NUM_THREADS")


def _thread_vars(threads: int) -> Dict[str, str]:
    return {**{k: str(threads) for k in _THREAD_VARS}, "TOKENIZERS_PARALLELISM": "false"}


class _InlineExecutor:
    """Runs each cell in this process when submitted (``--workers 0``, for debugging)."""

    def submit(self, fn, *args) -> Future:
        future: Future = Future()
        future.set_result(fn(*args))
        return future

    def shutdown(self, wait: bool = True, cancel_futures: bool = False) -> None:
        pass


@contextmanager
def stop_on_sigterm() -> Iterator[None]:
    """SIGTERM stops the study as Ctrl-C does (KeyboardInterrupt), so that it stops its
    workers and removes its scratch folder; only in the main thread, where Python runs
    signal handlers."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def interrupt(signum, frame):
        raise KeyboardInterrupt(f"signal {signum}")

    previous = signal.signal(signal.SIGTERM, interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def stop_workers(executor, grace: float = 30.0) -> None:
    """Shut a pool down now and stop its worker processes (SIGTERM: each unwinds its cell),
    waiting for them, so that nothing writes into the scratch folder once it is removed; those
    still running `grace` seconds after the SIGTERM (together, not each: a worker stuck in a
    GPU call would otherwise cost that much once per worker) get SIGKILL."""
    processes = list((getattr(executor, "_processes", None) or {}).values())  # shutdown forgets them
    executor.shutdown(wait=False, cancel_futures=True)
    for process in processes:
        if process.is_alive():
            process.terminate()
    deadline = time.monotonic() + grace
    for process in processes:
        process.join(timeout=max(0.0, deadline - time.monotonic()))
    for process in processes:
        if process.is_alive():
            process.kill()
            process.join()


@contextmanager
def thread_env(threads: int) -> Iterator[None]:
    """Thread-count variables for spawned workers, set before they import numpy or torch."""
    env = _thread_vars(threads)
    saved = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    try:
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


class _RayExecutor:
    """Ships cells to a Ray cluster: the one this process already joined (``ray.init``), else
    the one at ``address`` (``auto``, ``HOST:6379``, ``ray://HOST:10001``), else Ray's own
    choice (``RAY_ADDRESS``, a cluster ``ray start`` began on this machine, else a new local
    one, stopped at the end; a joined cluster is only left). Each cell gets
    ``threads`` CPUs and the thread variables; a cell whose worker dies is recorded as failed
    and not retried by Ray (rerun it by resuming), as in the process pool. The package, the
    corpora and the configs must be at the same paths on every node."""

    def __init__(self, address: Optional[str], threads: int, gpus_per_cell: float):
        try:
            import ray
        except ImportError:
            from .requirements import INSTALL

            raise StudyError(f"--ray needs Ray, which is not installed: {INSTALL}") from None
        self._ray = ray
        self._started = not ray.is_initialized()
        if self._started:
            ray.init(address=address or None, log_to_driver=False)
        self._remote = ray.remote(execute_cell).options(
            num_cpus=threads, num_gpus=gpus_per_cell, max_retries=0, runtime_env={"env_vars": _thread_vars(threads)}
        )

    def submit(self, fn, cell: Cell, runner) -> Future:
        return self._remote.remote(cell, runner).future()

    def shutdown(self, wait: bool = True, cancel_futures: bool = False) -> None:
        if self._started:
            self._ray.shutdown()
            self._started = False


def make_executor(workers, threads, use_ray, ray_address, gpu):
    if use_ray:
        return _RayExecutor(ray_address, threads, 1.0 if gpu else 0.0)
    if workers == 0:
        return _InlineExecutor()
    # spawned: no fork of a process that may hold torch threads
    return ProcessPoolExecutor(max_workers=workers, mp_context=get_context("spawn"), initializer=init_worker,
                               initargs=(threads,))
