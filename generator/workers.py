"""Worker processes that compile and measure candidates for the tuner.

A `Worker` is a spawned process (CUDA cannot fork) bound to one GPU that answers one task at a
time under a time limit; a crash, an illegal memory access or a hang costs that task only, and
the worker is replaced. `Compiler` keeps a pool of them compiling the kernels the search is
about to measure, ahead of the GPU; `WorkerMeasure` is the tuner's `measure(bucket, config)`,
running mlpgen.measure.measure_candidate in a worker once the compiler is done with the config.
"""

from __future__ import annotations

import collections
import math
import multiprocessing
import os
import signal
import threading
import time
from dataclasses import dataclass, replace

import torch

from mlpgen.children import die_with_parent
from mlpgen.measure import (
    GIVE_UP,
    VERDICTS,
    Measurement,
    WorkerPoisoned,
    compile_candidate,
    cuda_healthy,
    describe,
    measure_candidate,
)
from mlpgen.spec import KernelConfig, MLPSpec


class WorkerStartError(RuntimeError):
    """No worker process could be started: nothing can be measured, so tuning stops."""


def visible_device(index: int) -> str:
    """What CUDA_VISIBLE_DEVICES must say for a child to see this process's GPU `index`."""
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    if visible:
        names = [v.strip() for v in visible.split(",") if v.strip()]
        if index < len(names):
            return names[index]
    return str(index)


def _serve(conn, fn, device: str | None, parent: int, warm=None) -> None:
    """Answer tasks with (status, value, alive); alive=False tells the parent that this process
    exits after the answer, so it replaces the worker instead of racing a dying process.
    `warm()` runs before the process says it is ready (a failure there is left to the tasks)."""
    if device is not None:  # before anything initialises CUDA in this process
        os.environ["CUDA_VISIBLE_DEVICES"] = device
    os.setpgrp()  # our own process group: a kill on timeout also reaches ptxas and other children
    die_with_parent(parent)  # and a killed tuner takes its workers (and their group) along
    if warm is not None:
        try:
            warm()
        except Exception:
            pass
    conn.send(("ready", None, True))
    while True:
        try:
            task = conn.recv()
        except (EOFError, OSError):
            return
        if task is None:
            return
        alive = True
        try:
            status, value = "ok", fn(*task)
        except WorkerPoisoned as e:
            status, value, alive = "error", f"{e} (CUDA context lost; worker replaced)", False
        except Exception as e:
            status, value = "error", describe(e)
        if alive and torch.cuda.is_initialized() and not cuda_healthy():
            alive = False  # a broken CUDA context fails every later task: let the parent replace us
        conn.send((status, value, alive))
        if not alive:
            return


def exit_text(code: int | None) -> str:
    if code is not None and code < 0:
        try:
            return f"killed by {signal.Signals(-code).name}"
        except ValueError:
            pass
    return f"exit code {code}"


class Worker:
    """A spawned process that runs `fn(*task)` for one task at a time under a time limit.

    `run` returns (status, value): ("ok", fn's result), or ("error" | "timeout" | "crash",
    one line). A worker that hangs is killed and one that dies is replaced on the next task.
    `fn` (and `warm`, run in the process before its first task) must be importable by name (a
    module-level function): spawn pickles it by reference. A process starts on the first task,
    or earlier with `launch`, which does not wait for it: its imports (seconds of them) and
    `warm` then overlap the caller's work up to the first task.
    """

    def __init__(
        self,
        fn,
        limit_s: float = 60.0,
        device: int | None = None,
        startup_s: float = 300.0,
        warm=None,
    ):
        self.fn, self.limit_s, self.device, self.startup_s = fn, limit_s, device, startup_s
        self.warm = warm
        self.proc = self.conn = None
        self.ready = False  # the process said it is ready (it was started by launch or _start)
        self.restarts = 0

    def launch(self) -> None:
        """Start the process now, unless it is running; the next `run` waits until it is ready."""
        if self.proc is None:
            self._spawn()

    def _spawn(self) -> None:
        ctx = multiprocessing.get_context("spawn")
        parent, child = ctx.Pipe()
        device = None if self.device is None else visible_device(self.device)
        args = (child, self.fn, device, os.getpid(), self.warm)
        proc = ctx.Process(target=_serve, args=args, daemon=True)
        try:
            proc.start()
        except Exception as e:
            parent.close()
            raise WorkerStartError(f"cannot start a worker process: {describe(e)}") from e
        finally:
            child.close()
        self.proc, self.conn, self.ready = proc, parent, False

    def _await_ready(self) -> None:
        if not self.conn.poll(self.startup_s):
            self._stop()
            raise WorkerStartError(f"a worker process did not start within {self.startup_s:g}s")
        try:
            self.conn.recv()
        except (EOFError, OSError):
            code = self._stop()
            raise WorkerStartError(f"a worker process died starting ({exit_text(code)})") from None
        self.ready = True

    def _start(self) -> None:
        self._spawn()
        self._await_ready()

    def _stop(self) -> int | None:
        if self.proc is None:
            return None
        if self.proc.is_alive():
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)  # the worker and what it started
            except OSError:  # not yet its own group leader, or already gone
                self.proc.kill()
        self.proc.join(10)
        code = self.proc.exitcode
        self.conn.close()
        self.proc = self.conn = None
        self.ready = False
        return code

    def run(self, *task, limit_s: float | None = None) -> tuple[str, object]:
        limit = self.limit_s if limit_s is None else limit_s
        if self.proc is not None and not self.proc.is_alive():
            self._stop()
            self.restarts += 1
        if self.proc is None:
            self._start()
        elif not self.ready:  # launched ahead: wait for its start-up to end
            self._await_ready()
        try:
            self.conn.send(task)
            if not self.conn.poll(limit):
                self._stop()
                self.restarts += 1
                return "timeout", f"no answer within {limit:g}s (hang?); worker replaced"
            status, value, alive = self.conn.recv()
        except (EOFError, OSError, BrokenPipeError):
            code = self._stop()
            self.restarts += 1
            return "crash", f"worker died ({exit_text(code)}); worker replaced"
        if not alive:
            self._stop()
            self.restarts += 1
        return status, value

    def close(self, graceful: bool = True) -> None:
        """End the process: asked to exit and given 5 s for it, or (not graceful) killed at
        once, which a process holding nothing to save takes in a fraction of the second its
        interpreter and CUDA context take to shut down."""
        if graceful and self.proc is not None and self.proc.is_alive():
            try:
                self.conn.send(None)
                self.proc.join(5)
            except OSError:
                pass
        self._stop()

    def kill(self) -> None:
        """SIGKILL the process and its group now. Safe from another thread than the one using
        the worker: that one sees the process die and replaces it or closes it, as after a crash."""
        proc = self.proc
        if proc is None or proc.pid is None:
            return
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except OSError:  # not yet its own group leader, or already gone
            try:
                os.kill(proc.pid, signal.SIGKILL)
            except OSError:
                pass

    def __enter__(self) -> Worker:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def as_measurement(status: str, value) -> Measurement:
    if status == "ok":
        return value if isinstance(value, Measurement) else Measurement.from_dict(value)
    return Measurement(status if status in VERDICTS else "error", str(value))


def runtime_launches() -> bool:
    """Whether the candidates' modules launch through mlpgen.runtime (its direct launch supports
    the installed triton, and MLPGEN_RUNTIME is not 0)."""
    from mlpgen.runtime.versions import unsupported

    return os.environ.get("MLPGEN_RUNTIME") != "0" and unsupported("direct") is None


# A kernel that takes longer than this to compile is dropped as a candidate: some kernels of wide
# fp32 specs (784,1024,1024,10) compile for many minutes, while the headline's compile in seconds.
COMPILE_LIMIT_S = 60.0
# Before the decisions' timings the pool settles (Compiler.settle): the compiles in progress are
# waited for this long at most (most take seconds; one near COMPILE_LIMIT_S is not waited out)
SETTLE_S = 10.0


class Compiler:
    """Compiles kernel configs in a pool of worker processes, only those the tuner will measure
    and just ahead of it: `prefetch` queues configs (the search's next candidates), `wait`
    puts one at the head of the queue and blocks until it is compiled. Compiling is CPU-bound
    and Triton keeps the result on disk, so the measuring worker only loads it. A failure
    (compile error, over `limit_s`) is recorded as the config's reason, never fatal. Where
    mlpgen.runtime launches the candidates, a PDL variant is its config's binary launched with
    PDL (lanes.Linked), so only the config compiles."""

    def __init__(
        self,
        spec: MLPSpec,
        workdir: str,
        processes: int,
        limit_s: float = COMPILE_LIMIT_S,
        device: int | None = None,
        fn=None,
        on_done=None,
    ):
        self.spec, self.workdir, self.limit_s, self.device = spec, workdir, limit_s, device
        self.fn = compile_candidate if fn is None else fn
        self.on_done = on_done
        self.todo: collections.deque = collections.deque()
        self.state: dict[KernelConfig, str | None] = {}  # config -> "queued", "busy", "done"
        self.errors: dict[KernelConfig, str] = {}
        self.busy_s = 0.0  # seconds the compiling processes spent, summed over them
        self.waited_s = 0.0  # seconds `wait` blocked: what compiling added to the search
        self.fatal: WorkerStartError | None = None  # a compiling process could not start
        self.shares_pdl = runtime_launches()
        self.cond = threading.Condition()
        self.closed = False
        self.graceful = True  # how close ends the processes
        self.workers: list[Worker] = []  # one per thread, once it runs
        self.threads = [
            threading.Thread(target=self._drive, daemon=True) for _ in range(max(1, processes))
        ]
        for t in self.threads:
            t.start()

    def binary(self, config):
        """The config whose compile `config` runs: without PDL where the runtime adds it."""
        linked = self.shares_pdl and getattr(config, "pdl", False)
        return replace(config, pdl=False) if linked else config

    def prefetch(self, configs) -> None:
        with self.cond:
            for c in dict.fromkeys(map(self.binary, configs)):
                if c.has_kernel and c not in self.state:
                    self.state[c] = "queued"
                    self.todo.append(c)
            self.cond.notify_all()

    def wait(self, config: KernelConfig) -> str | None:
        """Compile `config` first if it is not yet; its compile error, or None."""
        if not config.has_kernel:
            return None
        config = self.binary(config)
        t0 = time.monotonic()
        with self.cond:
            if self.state.get(config) == "queued":
                self.todo.remove(config)
            if self.state.get(config) in (None, "queued"):
                self.state[config] = "queued"
                self.todo.appendleft(config)
                self.cond.notify_all()
            while self.state[config] != "done":
                if self.fatal is not None:  # nothing may ever compile it: stop the run
                    raise self.fatal
                self.cond.wait()
            self.waited_s += time.monotonic() - t0
            return self.errors.get(config)

    def _drive(self) -> None:
        worker = Worker(self.fn, self.limit_s, self.device)
        with self.cond:
            self.workers.append(worker)
        try:
            while True:
                with self.cond:
                    while not self.todo and not self.closed:
                        self.cond.wait()
                    if self.closed:
                        return
                    config = self.todo.popleft()
                    self.state[config] = "busy"
                t0 = time.monotonic()
                try:
                    status, value = worker.run(self.spec, config, self.workdir)
                except WorkerStartError as e:
                    with self.cond:
                        self.fatal = e
                        self.cond.notify_all()
                    return
                with self.cond:
                    self.busy_s += time.monotonic() - t0
                    if status != "ok" and not self.closed:  # not one killed by close
                        self.errors[config] = f"{status}: {value}"
                    self.state[config] = "done"
                    self.cond.notify_all()
                if self.on_done is not None:
                    self.on_done(config, status)
        finally:
            worker.close(self.graceful)

    def settle(self, limit_s: float = SETTLE_S) -> int:
        """Drop the queued compiles (the search that asked for them is over) and wait for those
        in progress, `limit_s` at most (a compile that runs on has most of its time behind it):
        host timings taken now are not slowed by compiling processes beside them. A dropped
        config compiles again if it is waited for. Returns how many were dropped."""
        deadline = time.monotonic() + limit_s
        with self.cond:
            dropped = len(self.todo)
            for config in self.todo:
                del self.state[config]
            self.todo.clear()
            while "busy" in self.state.values() and self.fatal is None and not self.closed:
                left = deadline - time.monotonic()
                if left <= 0:
                    break
                self.cond.wait(left)
            return dropped

    def ready(self, config: KernelConfig) -> bool:
        """Whether a wait for `config` would return at once (compiled, failed, or no kernel)."""
        with self.cond:
            return not config.has_kernel or self.state.get(self.binary(config)) == "done"

    def compiled(self) -> int:
        return sum(1 for v in self.state.values() if v == "done")

    def close(self, graceful: bool = True) -> None:
        """Stop the pool: each process ends after its compile in progress (not graceful: is
        killed, in progress or not; Triton writes its cache files whole or not at all)."""
        with self.cond:
            self.closed = True
            self.graceful = graceful
            self.cond.notify_all()
            workers = list(self.workers)
        if not graceful:
            for w in workers:
                w.kill()
        for t in self.threads:
            t.join(30)


@dataclass
class WorkerMeasure:
    """`measure(bucket, config) -> Measurement` for the tuner: candidates of one spec run in a
    worker bound to one GPU, each compiled first by the shared `compiler` (configs whose compile
    failed are not run); `prefetch` hands the search's next candidates to the compiler."""

    spec: MLPSpec
    workdir: str
    device: int | None = None
    limit_s: float = 60.0
    seed: int = 0
    compiler: Compiler | None = None
    fn: object = measure_candidate
    warm: object = None  # run by the worker as it starts (Worker's `warm`): warm_up
    # time on the QUICK budget (the search's measurements); tune.search turns it off for the
    # re-measurements its decisions rest on
    quick: bool = False

    # The search drives this measure from `drivers` threads (tune.search), which take turns
    # on the worker: a measurement is mostly a wait on another process, and one driver's
    # sampler and storage work between two measurements (about as long as a quick
    # measurement) runs while the other driver's candidate is measured.
    drivers = 2

    def __post_init__(self) -> None:
        self.worker = Worker(self.fn, self.limit_s, self.device, warm=self.warm)
        self.best: dict[int, float] = {}  # bucket -> best score of its quick measurements
        self.turn = threading.Lock()  # one candidate on the GPU at a time

    def launch(self) -> None:
        """Start the measuring process now (Worker.launch): it imports, opens its CUDA context
        and warms up while the first kernels compile, instead of at the first measurement."""
        self.worker.launch()

    def prefetch(self, configs) -> None:
        if self.compiler is not None:
            self.compiler.prefetch(configs)

    def settle(self) -> None:
        """Before the decisions' timings: no compile runs beside them (Compiler.settle)."""
        if self.compiler is not None:
            self.compiler.settle()

    def ready(self, config: KernelConfig) -> bool:
        """Whether measuring `config` would start at once (its kernel is compiled)."""
        return self.compiler is None or self.compiler.ready(config)

    def __call__(self, bucket: int, config: KernelConfig, verified: bool = False) -> Measurement:
        if self.compiler is not None:
            error = self.compiler.wait(config)
            if error is not None:
                return Measurement("error", f"compile: {error}")
        best = self.best.get(bucket) if self.quick else None
        give_up = None if best is None else GIVE_UP * best
        task = (self.spec, bucket, config, self.workdir, self.seed, self.quick, give_up)
        task += (True,) if verified else ()
        with self.turn:
            m = as_measurement(*self.worker.run(*task))
        if self.quick and m.ok and m.score < self.best.get(bucket, math.inf):
            self.best[bucket] = m.score
        return m

    def again(self, bucket: int, config: KernelConfig) -> Measurement:
        """Time `config` at `bucket` again, where it was verified already (measure_candidate's
        `verified`): the re-measurements that decisions rest on (decide.recheck)."""
        return self(bucket, config, verified=True)

    def close(self, graceful: bool = True) -> None:
        self.worker.close(graceful)
