"""Locust as a library: one load run of ``LoadOptions``, its live progress line and its reports.

One process (``processes == 0``): a ``LocalRunner``. ``processes == N``: a ``MasterRunner`` here,
bound to a free loopback port, and N worker processes that run ``worker_main`` (each loads the
same locustfile, builds a ``WorkerRunner`` and connects to 127.0.0.1); the master sends them
the ``botemu_*`` options with every spawn, and adds up their stats and our counters.

``--rate``: every user class is subclassed so that a caller waits for its start slot from a
``StartPacer`` (``rate / processes`` per process) before each call, its first included; the
pool of callers is large enough that a slot rarely finds all of them busy (a late start when it
does). ``--users``: the subclass waits not at all between calls (back to back).

Importing this module imports Locust, and so monkey-patches the process with gevent."""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import subprocess
import sys
import time
from collections import deque
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO, cast

import gevent
import gevent.event
import locust.stats
from locust import events
from locust.argument_parser import get_parser
from locust.env import Environment
from locust.html import get_html_report
from locust.runners import MasterRunner, Runner
from locust.stats import PERCENTILES_TO_REPORT, StatsCSVFileWriter, StatsError, stats_history
from locust.user import User
from locust.util.load_locustfile import load_locustfile

from emulator.calling.outgoing import preload
from emulator.load.chart import latency_chart
from emulator.load.metrics import METRICS
from emulator.load.options import LoadOptions, StartPacer
from emulator.load.summary import Generator, Summary, errors_by_rule, summarize

WORKER_CODE = (
    "import sys; from emulator.load.runner import worker_main; sys.exit(worker_main(sys.argv[1:]))"
)
WORKERS_TIMEOUT = 60.0
"""Seconds the master waits for its workers to connect."""


class LoadError(Exception):
    """A run that cannot start: a locustfile without users, workers that never connected."""


@dataclass(frozen=True)
class RunResult:
    summary: Summary
    interrupted: bool = False


def load_users(locustfile: Path) -> list[type[User]]:
    """The user classes of a locustfile (importing it registers its command line options)."""
    if not locustfile.is_file():
        raise LoadError(f"{locustfile}: no such locustfile")
    try:
        classes, _shapes = load_locustfile(str(locustfile))
    except Exception as e:  # the locustfile's own error: one line, not a traceback
        raise LoadError(f"{locustfile}: {type(e).__name__}: {e}") from e
    if not classes:
        raise LoadError(f"{locustfile}: no User class")
    return list(classes.values())


def shaped(classes: list[type[User]], rate: float | None) -> list[type[User]]:
    """The user classes paced to ``rate`` calls per second (this process's share), or back to
    back without a rate. Subclasses keep their names: master and workers match users by name."""
    pacer = StartPacer(rate, on_late=METRICS.late) if rate else None
    return [_shape(cls, pacer) for cls in classes]


def _shape(cls: type[User], pacer: StartPacer | None) -> type[User]:
    def wait_time(self: User) -> float:
        return pacer.delay() if pacer else 0.0

    def on_start(self: User) -> None:
        if pacer:
            gevent.sleep(pacer.delay())
        cls.on_start(self)

    body = {"wait_time": wait_time, "on_start": on_start, "__module__": cls.__module__}
    return type(cls.__name__, (cls,), body)


def parsed_options(options: LoadOptions) -> argparse.Namespace:
    """Locust's options as ``locust -f FILE --headless --host BOT`` parses them (with those the
    locustfile registered), and the ``botemu_*`` attributes the user class reads."""
    parser = get_parser(default_config_files=[])
    opts = parser.parse_args(["-f", str(options.locustfile), "--headless", "--host", options.bot])
    for name, value in options.botemu_options().items():
        setattr(opts, name, value)
    return cast(argparse.Namespace, opts)


def run(options: LoadOptions, err: TextIO = sys.stderr) -> RunResult:
    """One load run to its end (its duration, or Ctrl-C), with its CSV and HTML reports."""
    classes = load_users(options.locustfile)
    opts = parsed_options(options)
    workers = options.processes
    env = Environment(
        user_classes=shaped(classes, (options.rate or 0) / max(workers, 1)),
        events=events, host=options.bot, parsed_options=opts,
        locustfile=options.locustfile.name, stop_timeout=0.0,
    )  # fmt: skip
    if not workers:
        runner: Runner = env.create_local_runner()
        events.init.fire(environment=env, runner=runner, web_ui=None)
        return _drive(env, runner, options, err)
    master = env.create_master_runner("127.0.0.1", 0)
    events.init.fire(environment=env, runner=master, web_ui=None)
    procs = [_start_worker(options, master.server.port, workers) for _ in range(workers)]
    try:
        try:
            _await_workers(master, procs)
        except LoadError:
            master.quit()  # the workers that did connect quit too
            raise
        return _drive(env, master, options, err)
    finally:
        _stop_workers(procs)


def _start_worker(options: LoadOptions, port: int, workers: int) -> subprocess.Popen[bytes]:
    rate = (options.rate or 0) / workers
    args = ["--locustfile", str(options.locustfile), "--port", str(port), "--host", options.bot,
            "--rate", repr(rate)]  # fmt: skip
    return subprocess.Popen([sys.executable, "-c", WORKER_CODE, *args], stdout=subprocess.DEVNULL)


def _await_workers(master: MasterRunner, procs: list[subprocess.Popen[bytes]]) -> None:
    deadline = time.monotonic() + WORKERS_TIMEOUT
    while len(master.clients.ready) < len(procs):
        dead = [p for p in procs if p.poll() is not None]
        if dead:
            raise LoadError(f"a worker process exited ({dead[0].returncode}) before the run")
        if time.monotonic() > deadline:
            raise LoadError(f"{len(master.clients.ready)} of {len(procs)} workers connected")
        gevent.sleep(0.1)


def _stop_workers(procs: list[subprocess.Popen[bytes]]) -> None:
    for proc in procs:
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def _drive(env: Environment, runner: Runner, options: LoadOptions, err: TextIO) -> RunResult:
    """Start the callers, wait for the duration (or Ctrl-C), stop, report."""
    csv = _csv_writer(env, options.csv_prefix)
    progress = Progress(runner, err, options)
    locust.stats.HISTORY_STATS_INTERVAL_SEC = 1  # a point a second for --chart and the HTML
    helpers = [gevent.spawn(stats_history, runner), gevent.spawn(progress.loop)]
    if csv is not None:
        helpers.append(gevent.spawn(csv.stats_writer))
    began = time.monotonic()
    # in a greenlet: a master's start() returns only when every user is dispatched
    helpers.append(gevent.spawn(runner.start, options.callers, spawn_rate=options.spawn_rate))
    interrupted = _wait(options.duration)
    gevent.killall(helpers[-1:], block=True)
    runner.quit()
    gevent.killall(helpers, block=True)
    progress.finish()
    env.events.quitting.fire(environment=env, reverse=True)
    if csv is not None:
        _finish_csv(csv)
    if options.html is not None:
        _write(options.html, get_html_report(env, show_download_link=False))
    if options.chart is not None:
        shape = f"{options.rate:g} calls/s" if options.rate else f"{options.callers} callers"
        title = f"botemu load: {options.bot}, {shape}, pace {options.pace:g}"
        _write(options.chart, latency_chart(runner.stats.history, title))
    return RunResult(summary_of(runner, time.monotonic() - began, progress.cpu_peaks), interrupted)


def _wait(duration: float) -> bool:
    """Sleep for the run's duration; ``True`` when Ctrl-C or SIGTERM ended it sooner."""
    stop = gevent.event.Event()
    handlers = [gevent.signal_handler(sig, stop.set) for sig in (signal.SIGINT, signal.SIGTERM)]
    try:
        return bool(stop.wait(timeout=duration))
    finally:
        for handler in handlers:
            handler.cancel()


def _csv_writer(env: Environment, prefix: str | None) -> StatsCSVFileWriter | None:
    if prefix is None:
        return None
    Path(prefix).parent.mkdir(parents=True, exist_ok=True)
    return StatsCSVFileWriter(env, PERCENTILES_TO_REPORT, prefix, full_history=False)


def _finish_csv(csv: StatsCSVFileWriter) -> None:
    """Rewrite the request, failure and exception files with the final figures (the writer's
    loop wrote them at most a second ago), then close all four."""
    for handle, writer, write in (
        (csv.requests_csv_filehandle, csv.requests_csv_writer, csv.requests_csv),
        (csv.failures_csv_filehandle, csv.failures_csv_writer, csv.failures_csv),
        (csv.exceptions_csv_filehandle, csv.exceptions_csv_writer, csv.exceptions_csv),
    ):
        handle.seek(0)
        handle.truncate()
        write(writer)
    csv.close_files()


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def cpu_by_process(runner: Runner, peaks: dict[str, float]) -> dict[str, dict[str, float]]:
    """Each load process's CPU use: averaged over the run (``avg``), and the highest sample of
    the progress line (``max``: over a second here, over a report interval for a worker), in
    percent of one core."""
    own = _own(runner)
    cpu = {own: {"avg": METRICS.cpu_average(), "max": peaks.get(own, 0.0)}}
    for label, client_id in worker_labels(runner).items():
        cpu[label] = {"avg": METRICS.worker_cpu.get(client_id, 0.0), "max": peaks.get(label, 0.0)}
    return cpu


def _own(runner: Runner) -> str:
    return "master" if isinstance(runner, MasterRunner) else "local"


def worker_labels(runner: Runner) -> dict[str, str]:
    """``worker-1``... for the workers' client ids, in a stable order."""
    if not isinstance(runner, MasterRunner):
        return {}
    ids = sorted({*runner.clients.keys(), *METRICS.worker_cpu})
    return {f"worker-{i}": client_id for i, client_id in enumerate(ids, 1)}


def summary_of(runner: Runner, duration: float, peaks: dict[str, float]) -> Summary:
    stats = runner.stats
    calls = METRICS.snapshot() if METRICS.totals.started else {}
    generator = Generator(cpu_by_process(runner, peaks), METRICS.totals.late)
    exceptions = sum(int(e.get("count", 1)) for e in runner.exceptions.values())
    return summarize(
        stats.entries.values(), stats.total, _errors(runner), calls, generator, duration, exceptions
    )


def _errors(runner: Runner) -> list[tuple[str, int]]:
    return [(StatsError.parse_error(e.error), e.occurrences) for e in runner.stats.errors.values()]


class Progress:
    """The live progress line: once a second on a terminal (rewritten in place), otherwise a
    line after the first second and then every five."""

    def __init__(self, runner: Runner, out: TextIO, options: LoadOptions) -> None:
        self.runner = runner
        self.out = out
        self.enabled = options.progress
        self.tty = bool(getattr(out, "isatty", lambda: False)())
        self.every = 1 if self.tty else 5
        self.began = time.monotonic()
        self.started: deque[tuple[float, int]] = deque([(self.began, 0)], maxlen=6)
        self.cpu_peaks: dict[str, float] = {}
        self.cpu_now: dict[str, float] = {}

    def loop(self) -> None:
        tick = 0
        while True:
            gevent.sleep(1.0)
            tick += 1
            self._sample_cpu()
            if self.enabled and (tick - 1) % self.every == 0:
                self._show(self.line())

    def _show(self, line: str) -> None:
        if self.tty:
            width = shutil.get_terminal_size().columns - 1
            self.out.write("\r\x1b[K" + line[:width])
        else:
            self.out.write(line + "\n")
        self.out.flush()

    def finish(self) -> None:
        if self.enabled and self.tty:
            self.out.write("\n")
            self.out.flush()

    def _sample_cpu(self) -> None:
        """This process's CPU over the last second, the workers' over their last report."""
        self.cpu_now = {_own(self.runner): METRICS.cpu_recent()}
        for label, client_id in worker_labels(self.runner).items():
            self.cpu_now[label] = METRICS.worker_cpu_now.get(client_id, 0.0)
        for name, value in self.cpu_now.items():
            self.cpu_peaks[name] = max(self.cpu_peaks.get(name, 0.0), value)

    def calls_per_second(self) -> float | None:
        """Calls started per second over the last few seconds (``None``: the users count none)."""
        now, started = time.monotonic(), METRICS.totals.started
        self.started.append((now, started))
        if not started:
            return None
        (t0, n0), (t1, n1) = self.started[0], self.started[-1]
        return (n1 - n0) / (t1 - t0) if t1 > t0 else 0.0

    def line(self) -> str:
        """Seconds, calls/s (or requests/s), active calls, failures by rule, CPU per process,
        then p50/p95/p99 per request name."""
        stats = self.runner.stats
        cps = self.calls_per_second()
        rate = f"{stats.total.current_rps:.1f} req/s" if cps is None else f"{cps:.1f} calls/s"
        errors = errors_by_rule(_errors(self.runner))
        parts = [
            f"{time.monotonic() - self.began:4.0f}s", rate, f"active {METRICS.active}",
            "errors " + (" ".join(f"{k} {v}" for k, v in errors.items()) or "0"),
            "cpu " + " ".join(f"{k} {v:.0f}%" for k, v in self.cpu_now.items()),
        ]  # fmt: skip
        for entry in sorted(stats.entries.values(), key=lambda e: e.name):
            p50, p95, p99 = (entry.get_response_time_percentile(p) or 0 for p in (0.5, 0.95, 0.99))
            parts.append(f"{entry.name} {p50:.0f}/{p95:.0f}/{p99:.0f}ms")
        return "  ".join(parts)


def worker_main(argv: list[str]) -> int:
    """A worker process: the locustfile's users (paced to its share of the rate) under a
    ``WorkerRunner`` connected to the master on this host; it ends when the master quits."""
    parser = argparse.ArgumentParser(prog="botemu load worker")
    parser.add_argument("--locustfile", type=Path, required=True)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--host", required=True)
    parser.add_argument("--master-host", default="127.0.0.1")
    parser.add_argument("--rate", type=float, default=0.0)
    args = parser.parse_args(argv)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the master's: it tells us to quit
    try:
        classes = load_users(args.locustfile)
    except LoadError as e:  # one write, so that two workers' lines never run into each other
        os.write(sys.stderr.fileno(), f"botemu load worker: {e}\n".encode())
        return 2
    opts = get_parser(default_config_files=[]).parse_args(
        ["-f", str(args.locustfile), "--worker", "--host", args.host]
    )
    env = Environment(user_classes=shaped(classes, args.rate or None), events=events,
                      host=args.host, parsed_options=opts, locustfile=args.locustfile.name)  # fmt: skip
    # botemu's caller imports Faker and PyAV at its first call: here, before the master sees
    # this worker ready, as an import holds every greenlet (the heartbeat's too)
    if "emulator.load.user" in sys.modules:
        preload()
    runner = env.create_worker_runner(args.master_host, args.port)
    events.init.fire(environment=env, runner=runner, web_ui=None)
    runner.greenlet.join()
    events.quitting.fire(environment=env, reverse=True)
    return 0
