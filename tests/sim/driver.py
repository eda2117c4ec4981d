"""One run of the Action against the simulated world, the way the runner starts it.

Two ways, the same code path from `main(environ)` down:
- `in_process`: `triage.action.main.main(environ)` called directly (milliseconds; the bulk of random timelines);
- `subprocess`: `python entrypoint.py` with the same environment (about 0.3 s; real process start-up, imports
  and exit status), via `actionrun.run_action`'s environment.
Two runs "at once" are two threads (in-process) or two processes started together.

May import: the standard library, `actionrun`, `sim.world`, `triage.action.main`.
"""
from __future__ import annotations

import contextlib
import io
import json
import os
import subprocess
import sys
import tempfile
import threading
from dataclasses import dataclass, field
from pathlib import Path

from actionrun import ENTRYPOINT, REPO, action_input_defaults, parse_output_file


@dataclass
class Launch:
    """What the runner is asked to start: an event, its payload as captured when the event happened, inputs."""

    event: str
    payload: dict
    inputs: dict[str, str] = field(default_factory=dict)
    attempt: int = 1
    label: str = ""  # for the log: what this run is

    def with_attempt(self, attempt: int) -> "Launch":
        return Launch(self.event, self.payload, dict(self.inputs), attempt, f"{self.label} (attempt {attempt})")


@dataclass
class RunRecord:
    launch: Launch
    returncode: int
    outputs: dict[str, str]
    requests: list  # LoggedRequest objects attributed to this run (all of them, for runs at once: see `shared`)
    output: str = ""
    shared: bool = False  # ran at the same time as another run: `requests` are both runs' together

    @property
    def outcome(self) -> str:
        return self.outputs.get("outcome", "")


def environment(fake, run_dir: Path, launch: Launch) -> dict[str, str]:
    """The runner's environment for a composite action step (mirrors actionrun.run_action)."""
    (run_dir / "temp").mkdir(parents=True, exist_ok=True)
    event_path = run_dir / "event.json"
    event_path.write_text(json.dumps(launch.payload), encoding="utf-8")
    for name in ("output.txt", "summary.md"):
        (run_dir / name).write_text("", encoding="utf-8")
    values = dict(action_input_defaults())
    values["INPUT_GITHUB_TOKEN"] = fake.token
    for name, value in launch.inputs.items():
        values["INPUT_" + name.replace("-", "_").upper()] = value
    extra = {"PYTHONPATH": os.environ["PTD_SIM_PYTHONPATH"]} if os.environ.get("PTD_SIM_PYTHONPATH") else {}
    return {
        **extra,  # with PTD_SIM_ENTRYPOINT: the other checkout's own dependencies
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": os.environ.get("HOME", str(run_dir)),
        "LANG": "C.UTF-8", "CI": "true", "GITHUB_ACTIONS": "true",
        "GITHUB_EVENT_NAME": launch.event, "GITHUB_EVENT_PATH": str(event_path),
        "GITHUB_REPOSITORY": REPO, "GITHUB_REPOSITORY_OWNER": REPO.split("/")[0],
        "GITHUB_API_URL": fake.url, "GITHUB_SERVER_URL": "https://github.com",
        "GITHUB_OUTPUT": str(run_dir / "output.txt"), "GITHUB_STEP_SUMMARY": str(run_dir / "summary.md"),
        "GITHUB_WORKSPACE": str(run_dir), "GITHUB_ACTION_PATH": str(ENTRYPOINT.parent),
        "GITHUB_RUN_ID": "4242", "GITHUB_RUN_ATTEMPT": str(launch.attempt), "GITHUB_ACTOR": "octocat",
        "RUNNER_TEMP": str(run_dir / "temp"), "RUNNER_OS": "Linux",
        # retries still happen, without real sleeps; a per-issue budget short enough that a dead run ends fast
        "PTD_TRIAGE_MAX_BACKOFF": "0.01",
        **values,
    }


def _cache_the_default_bundle() -> None:
    """In-process only: compiling the bundled queue (YAML, RE2, Jinja2) takes most of a second and every run of a
    timeline compiles the same files, so the default bundle (no repository file, no explicit inputs) is compiled
    once per process. A subprocess run compiles it itself, as on a runner."""
    import triage.config.repo as repo

    if getattr(repo.load_repo_bundle, "sim_cached", False):
        return
    original, cache = repo.load_repo_bundle, {}

    def load_repo_bundle(config, **explicit):
        if config is not None or any(explicit.values()):
            return original(config, **explicit)
        if "default" not in cache:
            cache["default"] = original(None, **explicit)
        return cache["default"]

    load_repo_bundle.sim_cached = True
    repo.load_repo_bundle = load_repo_bundle


def entrypoint() -> Path:
    """PTD_SIM_ENTRYPOINT runs the subprocess mode against another checkout (e.g. the code before a fix, to see
    a scripted timeline fail on it)."""
    return Path(os.environ.get("PTD_SIM_ENTRYPOINT") or ENTRYPOINT)


class Driver:
    """Starts runs. `mode` is "in_process" or "subprocess" (default: PTD_SIM_MODE, else in_process)."""

    def __init__(self, fake, mode: str | None = None):
        mode = mode or os.environ.get("PTD_SIM_MODE") or "in_process"
        if mode not in ("in_process", "subprocess"):
            raise ValueError(mode)
        self.fake, self.mode = fake, mode
        if mode == "in_process":
            _cache_the_default_bundle()
        self._tmp = tempfile.TemporaryDirectory(prefix="ptd-sim-")
        self._count = 0
        self._count_lock = threading.Lock()

    def close(self) -> None:
        self._tmp.cleanup()

    def _run_dir(self) -> Path:
        with self._count_lock:
            self._count += 1
            return Path(self._tmp.name) / f"run{self._count}"

    def _start(self, launch: Launch) -> tuple[int, dict[str, str], str]:
        run_dir = self._run_dir()
        env = environment(self.fake, run_dir, launch)
        if self.mode == "subprocess":
            proc = subprocess.run([sys.executable, str(entrypoint())], env=env, cwd=run_dir, capture_output=True,
                                  text=True, timeout=120)
            code, text = proc.returncode, proc.stdout + proc.stderr
        else:
            from triage.action.main import main

            buffer = io.StringIO()
            with contextlib.redirect_stdout(buffer), contextlib.redirect_stderr(buffer):
                code = main(env)
            text = buffer.getvalue()
        return code, parse_output_file((run_dir / "output.txt").read_text("utf-8")), text

    def run(self, launch: Launch) -> RunRecord:
        start = len(self.fake.requests)
        code, outputs, text = self._start(launch)
        return RunRecord(launch, code, outputs, list(self.fake.requests[start:]), text)

    def run_together(self, first: Launch, second: Launch) -> list[RunRecord]:
        """Two runs started at the same moment (no concurrency group between them)."""
        start = len(self.fake.requests)
        results: list = [None, None]
        if self.mode == "subprocess":
            def go(i: int, launch: Launch) -> None:
                results[i] = self._start(launch)
            threads = [threading.Thread(target=go, args=(i, l)) for i, l in enumerate((first, second))]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
        else:
            from triage.action.main import main

            barrier = threading.Barrier(2)
            envs = [environment(self.fake, self._run_dir(), l) for l in (first, second)]

            def go(i: int) -> None:
                barrier.wait()
                results[i] = main(envs[i])

            buffer = io.StringIO()
            with contextlib.redirect_stdout(buffer), contextlib.redirect_stderr(buffer):
                threads = [threading.Thread(target=go, args=(i,)) for i in range(2)]
                for t in threads:
                    t.start()
                for t in threads:
                    t.join()
            results = [(code, parse_output_file(Path(env["GITHUB_OUTPUT"]).read_text("utf-8")), buffer.getvalue())
                       for code, env in zip(results, envs)]
        requests = list(self.fake.requests[start:])
        return [RunRecord(l, code, outputs, requests, text, shared=True)
                for l, (code, outputs, text) in zip((first, second), results)]
