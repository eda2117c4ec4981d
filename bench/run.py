"""Benchmark of what a user waits for and pays for, measured on this machine (a benchmark, not a timed test).

    python bench/run.py                 # everything; the table goes to stdout and bench/results.md
    python bench/run.py --skip-install  # no PyPI traffic: start-up, one issue and the sweep only
    python bench/run.py --sweep-issues 200 --out /tmp/r.md

What it measures (bench/README.md says how to read it):
1. Installing into a fresh venv: pip and uv, each with an empty and a warm cache; the package (`. `) or its
   dependencies only; and the dependency set from before this change (with actions-toolkit), for comparison.
2. What a job pays before and during the triage step, for action.yml's way (the environment, built once with uv
   and compiled, restored from the cache: unpacked, checked, run with -P) and for the alternative (a warm-cache
   uv install of the dependencies on every job, the package run from the checkout): a queue issue end to end
   against the GitHub stand-in (tests/fakegithub/, started here on 127.0.0.1), and an ignored event (an
   `issues.labeled` payload for another label), each from a fresh copy of the checkout, first run and warm.
   The total "warm install + start + one issue" is the issue's acceptance figure (at most 1.5 s).
3. A sweep of a 1,000-issue queue against the stand-in with GitHub's limits for a GITHUB_TOKEN simulated on a
   virtual clock (1,000 requests an hour, 80 content-creating requests a minute and 500 an hour): the sweep service
   in a child process, as many scheduled runs as it takes, with wall time, requests per issue by kind, peak memory,
   limits hit and whether anything was done twice.

Imports: the standard library; the project (`triage`) and the test helpers (`tests/fakegithub`, `tests/actionrun`)
for the stand-in and the payloads. Nothing here is imported by the package or the tests.
"""
from __future__ import annotations

import argparse
import inspect
import json
import os
import platform
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

ACTION_FILES = ("pyproject.toml", "README.md", "entrypoint.py", "action.yml", "triage", "queues")
REPO = "octo-org/octo-repo"
QUEUE = "oncall: distributed"


# ---- the machine -------------------------------------------------------------------------------------------------


def _version(cmd: list[str]) -> str:
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=30)
        return (out.stdout or out.stderr).strip().splitlines()[0]
    except (OSError, IndexError, subprocess.TimeoutExpired):
        return "not found"


def machine() -> dict[str, str]:
    cpu = "unknown"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    memory = "unknown"
    try:
        kib = int(re.search(r"MemTotal:\s+(\d+)", Path("/proc/meminfo").read_text()).group(1))
        memory = f"{kib / 1024 / 1024:.0f} GiB"
    except (OSError, AttributeError):
        pass
    return {"nproc": _version(["nproc"]), "cpu": cpu, "memory": memory, "os": platform.platform(),
            "python": platform.python_version(), "uv": _version(["uv", "--version"]),
            "pip": _version([base_python(), "-m", "pip", "--version"]).split(" from ")[0],
            "load": "/".join(f"{x:.1f}" for x in os.getloadavg())}


# ---- helpers -----------------------------------------------------------------------------------------------------


def base_python() -> str:
    """The interpreter a venv is made from (not the venv this script may run in)."""
    return getattr(sys, "_base_executable", None) or sys.executable


def copy_action(dest: Path, *, extra_dependency: str | None = None) -> Path:
    """A fresh copy of the Action as the runner downloads it: no __pycache__, nothing installed."""
    dest.mkdir(parents=True)
    for name in ACTION_FILES:
        src = ROOT / name
        if src.is_dir():
            shutil.copytree(src, dest / name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        else:
            shutil.copy2(src, dest / name)
    if extra_dependency:  # the dependency set before this change, for the comparison row
        text = (dest / "pyproject.toml").read_text(encoding="utf-8")
        text = text.replace("dependencies = [\n", f'dependencies = [\n  "{extra_dependency}",\n', 1)
        (dest / "pyproject.toml").write_text(text, encoding="utf-8")
    return dest


class Clock:
    """Wall time and the CPU time of the child processes run meanwhile. On a shared machine the wall time moves
    with the load; the CPU time much less, so the report shows both."""

    def __init__(self) -> None:
        self.wall, self.cpu = time.perf_counter(), self._children()

    @staticmethod
    def _children() -> float:
        usage = resource.getrusage(resource.RUSAGE_CHILDREN)
        return usage.ru_utime + usage.ru_stime

    def stop(self) -> tuple[float, float]:
        return time.perf_counter() - self.wall, self._children() - self.cpu


def timed(cmd: list[str], env: dict[str, str] | None = None, cwd: Path | None = None) -> float:
    clock = Clock()
    proc = subprocess.run(cmd, env=env, cwd=cwd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed ({proc.returncode}): {(proc.stderr or proc.stdout)[-800:]}")
    return clock.stop()[0]


def venv_python(venv: Path) -> Path:
    return venv / "bin" / "python" if (venv / "bin").exists() else venv / "Scripts" / "python.exe"


def dir_size_mb(path: Path) -> float:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file() and not f.is_symlink()) / 1e6


def count_dists(venv: Path) -> int:
    return len(list(venv.glob("lib/python*/site-packages/*.dist-info")))


# ---- 1. install --------------------------------------------------------------------------------------------------


def uv_install(work: Path, action: Path, cache: Path, *, mode: str, offline: bool = False,
               cpu: list | None = None) -> tuple[float, Path]:
    """Seconds for `uv venv` + one `uv pip install` into it (what action.yml's install step runs); the CPU
    seconds are appended to `cpu` when given."""
    venv = Path(tempfile.mkdtemp(dir=work, prefix="venv-"))
    shutil.rmtree(venv)
    env = dict(os.environ, UV_CACHE_DIR=str(cache), UV_NO_PROGRESS="1")
    target = ["-r", str(action / "pyproject.toml")] if mode == "deps" else [str(action)]
    clock = Clock()
    timed(["uv", "venv", "--quiet", "--python", base_python(), str(venv)], env)
    timed(["uv", "pip", "install", "--quiet", *(["--offline"] if offline else []), "--python",
           str(venv_python(venv)), *target], env)
    wall, used = clock.stop()
    if cpu is not None:
        cpu.append(used)
    return wall, venv


def pip_install(work: Path, action: Path, cache: Path) -> tuple[float, float, Path]:
    """(seconds for `python -m venv`, seconds for `pip install <action>` into it)."""
    venv = Path(tempfile.mkdtemp(dir=work, prefix="pipvenv-"))
    shutil.rmtree(venv)
    made = timed([base_python(), "-m", "venv", str(venv)])
    env = dict(os.environ, PIP_CACHE_DIR=str(cache), PIP_DISABLE_PIP_VERSION_CHECK="1")
    installed = timed([str(venv_python(venv)), "-m", "pip", "install", "--quiet", "--no-input", str(action)], env)
    return made, installed, venv


def bench_install(work: Path, repeats: int) -> list[dict]:
    rows: list[dict] = []
    action = copy_action(work / "action-install")
    old = copy_action(work / "action-old", extra_dependency="actions-toolkit>=0.1.15,<0.2")

    def add(what: str, cache: str, seconds: list[float], venv: Path | None, note: str = "",
            cpu: list[float] | None = None) -> None:
        rows.append({"what": what, "cache": cache, "seconds": statistics.median(seconds), "runs": len(seconds),
                     "cpu": statistics.median(cpu) if cpu else None,
                     "packages": count_dists(venv) if venv else None,
                     "size_mb": round(dir_size_mb(venv), 1) if venv else None, "note": note})

    for label, tree in (("pip install . (this change)", action), ("pip install . (before: + actions-toolkit)", old)):
        cache = work / f"pip-cache-{len(rows)}"
        made, cold, venv = pip_install(work, tree, cache)
        add(label, "empty", [cold], venv, f"venv creation with pip ({made:.1f} s) not included")
        warm = [pip_install(work, tree, cache)[1] for _ in range(repeats)]
        add(label, "warm", warm, venv, "venv creation not included")
    if shutil.which("uv") is None:
        rows.append({"what": "uv", "cache": "-", "seconds": None, "note": "uv not found on PATH: rows skipped"})
        return rows
    for label, tree, mode in (("uv pip install . (this change)", action, "package"),
                              ("uv pip install -r pyproject.toml (dependencies only)", action, "deps"),
                              ("uv pip install . (before: + actions-toolkit)", old, "package")):
        cache = work / f"uv-cache-{len(rows)}"
        cpu: list[float] = []
        cold, venv = uv_install(work, tree, cache, mode=mode, cpu=cpu)
        add(label, "empty", [cold], venv, "includes `uv venv`", cpu)
        cpu = []
        warm = [uv_install(work, tree, cache, mode=mode, cpu=cpu)[0] for _ in range(repeats)]
        add(label, "warm", warm, venv, "includes `uv venv`", cpu)
        if mode == "deps":
            cpu = []
            offline = [uv_install(work, tree, cache, mode=mode, offline=True, cpu=cpu)[0] for _ in range(repeats)]
            add(label + " --offline", "warm", offline, venv, "no index revalidation", cpu)
    return rows


# ---- 2-4. runs of entrypoint.py ----------------------------------------------------------------------------------


def runner_env(fake, action: Path, run_dir: Path, event_name: str, payload: dict,
               inputs: dict[str, str] | None = None) -> dict[str, str]:
    """What the runner gives action.yml's triage step (the same variables tests/actionrun.py sets)."""
    from actionrun import action_input_defaults

    (run_dir / "temp").mkdir(parents=True, exist_ok=True)
    event_path = run_dir / "event.json"
    event_path.write_text(json.dumps(payload), encoding="utf-8")
    for name in ("output.txt", "summary.md"):
        (run_dir / name).touch()
    values = dict(action_input_defaults(), INPUT_GITHUB_TOKEN=fake.token)
    for name, value in (inputs or {}).items():
        values["INPUT_" + name.replace("-", "_").upper()] = value
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": os.environ.get("HOME", str(run_dir)),
        "LANG": "C.UTF-8", "CI": "true", "GITHUB_ACTIONS": "true", "GITHUB_EVENT_NAME": event_name,
        "GITHUB_EVENT_PATH": str(event_path), "GITHUB_REPOSITORY": REPO, "GITHUB_REPOSITORY_OWNER": REPO.split("/")[0],
        "GITHUB_API_URL": fake.url, "GITHUB_SERVER_URL": "https://github.com",
        "GITHUB_OUTPUT": str(run_dir / "output.txt"), "GITHUB_STEP_SUMMARY": str(run_dir / "summary.md"),
        "GITHUB_WORKSPACE": str(run_dir), "GITHUB_ACTION_PATH": str(action), "GITHUB_RUN_ID": "4242",
        "GITHUB_RUN_ATTEMPT": "1", "GITHUB_ACTOR": "octocat", "RUNNER_TEMP": str(run_dir / "temp"),
        "RUNNER_OS": "Linux", **values,
    }


def run_entrypoint(python: Path, action: Path, env: dict[str, str], cwd: Path,
                   cpu: list | None = None, *, from_venv: bool = False) -> tuple[float, str]:
    """One run of entrypoint.py. `from_venv`: with -P, as action.yml runs it, so that the package is imported
    from the environment (installed and compiled) rather than from the checkout beside entrypoint.py."""
    clock = Clock()
    cmd = [str(python), *(["-P"] if from_venv else []), str(action / "entrypoint.py")]
    proc = subprocess.run(cmd, env=env, cwd=cwd, capture_output=True, text=True, timeout=120)
    elapsed, used = clock.stop()
    if proc.returncode != 0:
        raise RuntimeError(f"entrypoint.py exited {proc.returncode}: {(proc.stdout + proc.stderr)[-800:]}")
    if cpu is not None:
        cpu.append(used)
    return elapsed, proc.stdout


def request_kinds(requests) -> Counter:
    """Requests by what they are, from the stand-in's log."""
    kinds: Counter = Counter()
    for r in requests:
        path = re.sub(r"/repos/[^/]+/[^/]+", "", r.path)
        if path.startswith("/search/"):
            kind = "search"
        elif r.method == "POST" and path.endswith("/comments"):
            kind = "write: comment"
        elif r.method == "POST" and path.endswith("/labels"):
            kind = "write: labels"
        elif r.method != "GET":
            kind = f"write: {r.method} other"
        elif re.fullmatch(r"/issues/\d+", path):
            kind = "read: issue"
        elif path.endswith("/comments"):
            kind = "read: comments"
        elif path.endswith("/events") or path.endswith("/timeline"):
            kind = "read: events"
        else:
            kind = "read: other"
        kinds[kind] += 1
    return kinds


def pack(venv: Path, archive: Path) -> None:
    """What actions/cache does with a path: tar, compressed with zstd (gzip when zstd is missing here)."""
    compressor = ["zstd", "-q", "-T0"] if shutil.which("zstd") else ["gzip", "-q"]
    with open(archive, "wb") as out:
        tar = subprocess.Popen(["tar", "-cf", "-", "-C", str(venv.parent), venv.name], stdout=subprocess.PIPE)
        subprocess.run(compressor, stdin=tar.stdout, stdout=out, check=True)
        tar.wait()


def unpack(archive: Path, into: Path) -> None:
    decompressor = ["zstd", "-q", "-d", "-c"] if shutil.which("zstd") else ["gzip", "-q", "-d", "-c"]
    with open(archive, "rb") as src:
        unzip = subprocess.Popen(decompressor, stdin=src, stdout=subprocess.PIPE)
        subprocess.run(["tar", "-xf", "-", "-C", str(into)], stdin=unzip.stdout, check=True)
        unzip.wait()


def bench_runs(work: Path, repeats: int, *, with_install: bool) -> dict:
    """Cold start of an ignored event, one issue end to end, and what a job pays in all: action.yml's way (the
    environment restored from the cache) and, for comparison, installing the dependencies with a warm uv cache
    on every job and running the package from the checkout."""
    from actionrun import FSDP_WITH_REPRO, NEEDS_REPRO, issues_payload, seed_issue
    from fakegithub import FakeGitHub

    out: dict = {"strategies": []}
    use_uv = shutil.which("uv") is not None and with_install
    temp = work / "runner-temp"  # RUNNER_TEMP: the same path in every job, as on a runner
    temp.mkdir()
    venv = temp / "ptd-triage-venv"
    archive = work / "ptd-triage-venv.tar.zst"
    with FakeGitHub() as fake:
        seed_issue(fake, 1, NEEDS_REPRO, labels=("bug", QUEUE))
        ignored = issues_payload(fake, 1, "labeled", label="bug", repo=REPO)
        number = [100]

        def one_issue(action: Path, python: Path, cpu: list, from_venv: bool) -> tuple[float, list]:
            number[0] += 1
            seed_issue(fake, number[0], FSDP_WITH_REPRO if number[0] % 2 else NEEDS_REPRO)
            payload = issues_payload(fake, number[0], "labeled", label=QUEUE, repo=REPO)
            run_dir = work / f"run-{number[0]}"
            start = len(fake.requests)
            seconds, _ = run_entrypoint(python, action, runner_env(fake, action, run_dir, "issues", payload),
                                        run_dir, cpu, from_venv=from_venv)
            return seconds, list(fake.requests[start:])

        if use_uv:
            # The cache miss: what the first job (per Action version and interpreter) pays once.
            action = copy_action(work / "action-build")
            env = dict(os.environ, UV_CACHE_DIR=str(work / "uv-cache-empty"), UV_NO_PROGRESS="1")
            clock = Clock()
            timed(["uv", "venv", "--quiet", "--python", base_python(), str(venv)], env)
            timed(["uv", "pip", "install", "--quiet", "--compile-bytecode", "--python", str(venv_python(venv)),
                   str(action)], env)
            timed([str(venv_python(venv)), "-P", "-m", "triage.config.precompile"],  # as action.yml does
                  {k: v for k, v in env.items() if k != "PTD_TRIAGE_CACHE"})
            build_s, build_cpu = clock.stop()
            clock = Clock()
            pack(venv, archive)
            pack_s, _ = clock.stop()
            out["miss"] = {"build_s": build_s, "build_cpu": build_cpu, "pack_s": pack_s,
                           "archive_mb": archive.stat().st_size / 1e6, "venv_mb": dir_size_mb(venv)}

        def restored(tag: str, cpu: list) -> tuple[Path, Path, float]:
            """A job on a cache hit: an empty RUNNER_TEMP, the environment unpacked, the check step run."""
            shutil.rmtree(venv, ignore_errors=True)
            action = copy_action(work / f"action-{tag}")
            clock = Clock()
            unpack(archive, temp)
            timed([str(venv_python(venv)), "-S", "-c", ""])
            seconds, used = clock.stop()
            cpu.append(used)
            return action, venv_python(venv), seconds

        def per_job_install(tag: str, cpu: list) -> tuple[Path, Path, float]:
            """The alternative: dependencies from a warm uv cache on every job, the package from the checkout."""
            action = copy_action(work / f"action-{tag}")
            seconds, fresh = uv_install(work, action, work / "uv-cache-deps", mode="deps", cpu=cpu)
            return action, venv_python(fresh), seconds

        strategies = []
        if use_uv:
            uv_install(work, copy_action(work / "action-warmup"), work / "uv-cache-deps", mode="deps")
            strategies = [("action.yml: environment restored from the cache (hit)", restored, True),
                          ("alternative: uv install of the dependencies on every job (warm uv cache)",
                           per_job_install, False)]
        else:  # --skip-install: this interpreter's packages, the package from the checkout
            def as_is(tag: str, cpu: list) -> tuple[Path, Path, float]:
                cpu.append(0.0)
                return copy_action(work / f"action-{tag}"), Path(sys.executable), 0.0

            strategies = [("this interpreter, package from the checkout (--skip-install)", as_is, False)]
        for label, prepare, from_venv in strategies:
            totals, prep_s, run_s, prep_cpu, run_cpu, requests = [], [], [], [], [], []
            for trial in range(repeats):
                action, python, seconds = prepare(f"{len(out['strategies'])}-{trial}", prep_cpu)
                ran, made = one_issue(action, python, run_cpu, from_venv)
                prep_s.append(seconds)
                run_s.append(ran)
                totals.append(seconds + ran)
                requests = made
            warm_cpu: list[float] = []
            warm = [one_issue(action, python, warm_cpu, from_venv)[0] for _ in range(repeats)]
            first, first_cpu = [], []
            for trial in range(repeats):
                action, python, _ = prepare(f"{len(out['strategies'])}-ignored-{trial}", [])
                run_dir = work / f"run-ignored-{len(out['strategies'])}-{trial}"
                env = runner_env(fake, action, run_dir, "issues", ignored)
                seconds, stdout = run_entrypoint(python, action, env, run_dir, first_cpu, from_venv=from_venv)
                if "nothing to do" not in stdout:
                    raise RuntimeError(f"the ignored event was not ignored: {stdout[-300:]}")
                first.append(seconds)
            ignored_cpu: list[float] = []
            ignored_warm = [run_entrypoint(python, action, env, run_dir, ignored_cpu, from_venv=from_venv)[0]
                            for _ in range(repeats)]
            out["strategies"].append({
                "label": label, "runs": len(totals), "total_s": statistics.median(totals), "min_s": min(totals),
                "prepare_s": statistics.median(prep_s), "first_issue_s": statistics.median(run_s),
                "total_cpu": statistics.median(a + b for a, b in zip(prep_cpu, run_cpu)),
                "first_issue_cpu": statistics.median(run_cpu), "warm_issue_s": statistics.median(warm),
                "warm_issue_cpu": statistics.median(warm_cpu), "requests": len(requests),
                "by_kind": dict(request_kinds(requests)),
                "ignored_first_s": statistics.median(first), "ignored_first_cpu": statistics.median(first_cpu),
                "ignored_warm_s": statistics.median(ignored_warm), "ignored_warm_cpu": statistics.median(ignored_cpu),
            })
        out["python"] = _version([str(python), "--version"])
    return out


# ---- 5. the 1,000-issue sweep (in a child process, so its peak memory is its own) -------------------------------


def seed_queue(fake, count: int) -> None:
    from actionrun import FSDP_WITH_REPRO, NEEDS_REPRO, NOT_DISTRIBUTED

    scenarios = (NEEDS_REPRO, FSDP_WITH_REPRO, NOT_DISTRIBUTED)
    for n in range(1, count + 1):
        title, body = scenarios[n % 3]
        fake.add_issue(REPO, n, title=f"{title} ({n})", body=body, labels=[QUEUE])
        if n % 4 == 0:  # some issues already have a person's comment, so their comments are read
            fake.add_comment(REPO, n, "Same here on 2 nodes x 8 GPUs.", author=f"user{n}")


def _kwargs(callable_, **wanted):
    """Only the keyword arguments `callable_` accepts: the services' signatures are still moving."""
    params = inspect.signature(callable_).parameters
    if any(p.kind is p.VAR_KEYWORD for p in params.values()):
        return wanted
    return {k: v for k, v in wanted.items() if k in params}


def sweep_child(count: int, search_mode: str, max_runs: int, interval_s: float) -> dict:
    from fakegithub.server import FakeGitHub, RateLimits, VirtualClock

    clock = VirtualClock()
    limits = RateLimits.github_token()
    fake = FakeGitHub(rate_limits=limits, clock=clock, search_mode=search_mode,
                      **({"search_lag_seconds": 30.0, "search_lag_requests": 50} if search_mode == "lagging" else {}))
    with fake:
        seed_queue(fake, count)
        clock.advance(86400.0)  # the queue is a day old: nothing is "recently updated" (left to its event run)
        baseline_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        from triage.config.bundle import load_bundle
        from triage.github.client import GitHubClient
        from triage.service.triager import Triager

        bundle = load_bundle()
        runs, start_wall, start_clock = [], time.perf_counter(), clock()
        for index in range(max_runs):
            before = len(fake.requests)
            client = GitHubClient(fake.token, fake.url, **_kwargs(GitHubClient.__init__, sleep=clock.sleep,
                                                                  clock=clock, timeout=(5, 30)))
            triager = Triager(client, bundle, repo=REPO, **_kwargs(Triager.__init__, clock=clock,
                                                                  own_logins=(fake.bot_login,)))
            sweep = triager.sweep(1000)
            made = fake.requests[before:]
            runs.append({"run": index + 1, "found": sweep.found, "triaged": len(sweep.triaged),
                         "failed": len(sweep.failed), "left": sweep.left, "stopped": sweep.stopped,
                         "requests": len(made), "writes": sum(r.method != "GET" for r in made),
                         "errors": sorted({str(r.error)[:160] for r in sweep.failed})[:3]})
            if not sweep.found or (not sweep.left and not sweep.failed):
                break
            clock.advance(interval_s)  # the next scheduled sweep
        wall = time.perf_counter() - start_wall
        peak_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        issues = [fake.issue(REPO, n) for n in range(1, count + 1)]
        # Processed: marked by the bot, or waiting for a person (the review label), as a sweep leaves them.
        unprocessed = [i["number"] for i in issues
                       if not any(l["name"] in ("ptd-bot-triaged", "triage review") for l in i["labels"])]
        done = count - len(unprocessed)
        repeated_comments = 0
        for n in range(1, count + 1):
            markers = [m for c in fake.comments(REPO, n) for m in re.findall(r"<!-- ptd-triage:[^>]*-->", c["body"])]
            repeated_comments += len(markers) - len(set(markers))
        label_posts = Counter(r.path for r in fake.requests if r.method == "POST" and r.path.endswith("/labels")
                              and 200 <= r.status < 300)
        kinds = request_kinds(fake.requests)
        triaged = sum(r["triaged"] for r in runs)
        return {
            "issues": count, "search_mode": search_mode, "runs": runs, "wall_s": wall, "interval_h": interval_s / 3600,
            "virtual_h": (clock() - start_clock) / 3600, "triaged": triaged, "processed": done,
            "unprocessed": unprocessed[:10],
            "requests": len(fake.requests), "by_kind": dict(kinds),
            "per_issue": {k: v / max(triaged, 1) for k, v in kinds.items()},
            "peak_writes_minute": fake.peak_writes(60.0), "peak_writes_hour": fake.peak_writes(3600.0),
            "limit_events": dict(Counter(e.kind for e in fake.limit_events)),
            "repeated_comments": repeated_comments,
            "issues_labelled_twice": sum(1 for v in label_posts.values() if v > 1),
            "baseline_rss_mb": baseline_kb / 1024, "peak_rss_mb": peak_kb / 1024,
            "limits": {"core_per_hour": limits.core_per_hour, "writes_per_minute": limits.writes_per_minute,
                       "writes_per_hour": limits.writes_per_hour},
        }


def bench_sweep(count: int, search_mode: str, max_runs: int, interval_s: float) -> dict:
    cmd = [sys.executable, str(Path(__file__).resolve()), "--sweep-child", str(count), "--search-mode", search_mode,
           "--max-runs", str(max_runs), "--interval", str(interval_s)]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=3600)
    if proc.returncode != 0:
        return {"error": (proc.stderr or proc.stdout).strip()[-1500:], "issues": count, "search_mode": search_mode}
    return json.loads(proc.stdout.strip().splitlines()[-1])


# ---- the report --------------------------------------------------------------------------------------------------


def _s(value) -> str:
    return "-" if value is None else f"{value:.2f} s"


def markdown(info: dict, installs: list[dict] | None, runs: dict | None, sweeps: list[dict]) -> str:
    m = info["machine"]
    lines = ["# ptd-triage benchmark", "",
             f"Measured {info['date']} with `{info['command']}`.", "",
             f"Machine: {m['nproc']} CPU(s), {m['cpu']}, {m['memory']} RAM; {m['os']}; Python {m['python']}; "
             f"{m['uv']}; {m['pip']}. Load average (1/5/15 min) at the start: {m['load']}; at the end: "
             f"{info['load_end']}.", ""]
    if installs is not None:
        lines += ["## Install into a fresh venv", "",
                  "| What | Cache | Wall (median) | CPU | Runs | Packages | venv size | Note |",
                  "| --- | --- | --- | --- | --- | --- | --- | --- |"]
        for r in installs:
            size = f"{r['size_mb']} MB" if r.get("size_mb") is not None else "-"
            lines.append(f"| {r['what']} | {r['cache']} | {_s(r['seconds'])} | {_s(r.get('cpu'))} | "
                         f"{r.get('runs', '-')} | {r.get('packages') or '-'} | {size} | {r.get('note', '')} |")
        lines.append("")
    if runs is not None:
        lines += ["## What a job pays: prepare the environment, then run entrypoint.py", "",
                  f"Interpreter: {runs['python']}. Each job starts from a fresh copy of the checkout (no .pyc, as on a "
                  "runner) and an empty RUNNER_TEMP; \"prepare\" is what action.yml does before the triage step "
                  "(for a cache hit: unpacking the environment as actions/cache does, and the check step; the "
                  "download from GitHub's cache is not measurable here). Medians; CPU is user + system time of the "
                  "processes.", ""]
        miss = runs.get("miss")
        if miss:
            lines += [f"A cache miss (once per Action version and interpreter) builds the environment with uv from "
                      f"an empty uv cache and compiles it: {_s(miss['build_s'])} (CPU {_s(miss['build_cpu'])}), "
                      f"then packs it for the cache in {_s(miss['pack_s'])}: {miss['venv_mb']:.0f} MB, "
                      f"{miss['archive_mb']:.1f} MB compressed.", ""]
        lines += ["| Strategy | Warm install + start + one issue (target: at most 1.5 s) | CPU | Best | "
                  "One issue: first / warm run | Ignored event: first / warm run | Requests |",
                  "| --- | --- | --- | --- | --- | --- | --- |"]
        for st in runs["strategies"]:
            kinds = ", ".join(f"{k} {v}" for k, v in sorted(st["by_kind"].items()))
            lines.append(
                f"| {st['label']} | **{_s(st['total_s'])}** (prepare {_s(st['prepare_s'])} + run "
                f"{_s(st['first_issue_s'])}) | {_s(st['total_cpu'])} | {_s(st['min_s'])} | "
                f"{_s(st['first_issue_s'])} / {_s(st['warm_issue_s'])} (CPU {_s(st['first_issue_cpu'])} / "
                f"{_s(st['warm_issue_cpu'])}) | {_s(st['ignored_first_s'])} / {_s(st['ignored_warm_s'])} (CPU "
                f"{_s(st['ignored_first_cpu'])} / {_s(st['ignored_warm_cpu'])}) | {st['requests']} ({kinds}) |")
        lines.append("")
    for s in sweeps:
        lines += [f"## Sweep of {s['issues']:,} queue issues (search {s['search_mode']})", ""]
        if "error" in s:
            lines += ["Did not complete:", "", "```", s["error"], "```", ""]
            continue
        lim = s["limits"]
        per_run = "; ".join(f"run {r['run']}: triaged {r['triaged']}, failed {r['failed']}, left {r['left']}"
                            + (f" ({r['stopped']})" if r["stopped"] else "") for r in s["runs"])
        per_issue = ", ".join(f"{k} {v:.2f}" for k, v in sorted(s["per_issue"].items()))
        hourly = "yes" if s["limit_events"].get("primary") else "no"
        secondary = {k: v for k, v in s["limit_events"].items() if k.startswith("secondary")}
        errors = sorted({e for r in s["runs"] for e in r["errors"]})
        lines += [f"Simulated GITHUB_TOKEN limits: {lim['core_per_hour']:,} requests/hour, "
                  f"{lim['writes_per_minute']} writes/minute, {lim['writes_per_hour']} writes/hour; virtual clock, "
                  f"a scheduled run every {s['interval_h']:g} h until the queue is done.", "",
                  "| Measure | Value |", "| --- | --- |",
                  f"| Wall time (all runs) | {s['wall_s']:.1f} s |",
                  f"| Simulated time | {s['virtual_h']:.1f} h over {len(s['runs'])} run(s) |",
                  f"| Runs | {per_run} |",
                  f"| Issue results (a re-read issue counts again) / processed at the end | {s['triaged']} / "
                  f"{s['processed']} of {s['issues']}"
                  + (f" (not processed: #{', #'.join(map(str, s['unprocessed']))}"
                     f"{', ...' if s['issues'] - s['processed'] > len(s['unprocessed']) else ''})"
                     if s["processed"] < s["issues"] else "") + " |",
                  f"| Requests | {s['requests']:,} ({s['requests'] / max(s['triaged'], 1):.2f} per triaged issue) |",
                  f"| Requests per triaged issue by kind | {per_issue} |",
                  f"| Peak writes in any minute / hour | {s['peak_writes_minute']} / {s['peak_writes_hour']} |",
                  f"| Secondary limit hit | {'yes: ' + json.dumps(secondary) if secondary else 'no'} |",
                  f"| Hourly budget exceeded (refused) | {hourly} |",
                  f"| Done twice: repeated comments / issues labelled twice | {s['repeated_comments']} / "
                  f"{s['issues_labelled_twice']} |",
                  f"| Peak memory (RSS of the child: stand-in + sweep) | {s['peak_rss_mb']:.0f} MB "
                  f"(after seeding the stand-in: {s['baseline_rss_mb']:.0f} MB) |"]
        if errors:
            lines.append(f"| Errors (first kinds) | {md_cell('; '.join(errors))} |")
        lines.append("")
    return "\n".join(lines)


def kept_sections(results: Path) -> str:
    """What other benches wrote into results.md between their markers (bench/startup.py's, bench/shadow.py's and
    bench/requests.py's, bench/leave_one_writer_out.py's sections, scripts/mutation_check.py's figures), kept."""
    text = results.read_text(encoding="utf-8") if results.exists() else ""
    kept = []
    for name in ("startup", "shadow", "requests", "lowo", "mutation"):
        start, end = f"<!-- {name} -->", f"<!-- /{name} -->"
        if start in text and end in text:
            kept.append(text[text.index(start):text.index(end) + len(end)])
    return "".join("\n\n" + section for section in kept)


def md_cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--skip-install", action="store_true", help="no install rows (no PyPI traffic); runs use "
                        "this interpreter's packages")
    parser.add_argument("--skip-sweep", action="store_true")
    parser.add_argument("--repeats", type=int, default=5, help="warm repetitions (median)")
    parser.add_argument("--sweep-issues", type=int, default=1000)
    parser.add_argument("--search-modes", default="immediate,lagging")
    parser.add_argument("--max-runs", type=int, default=6, help="scheduled sweeps at most")
    parser.add_argument("--interval", type=float, default=6 * 3600.0, help="seconds between scheduled sweeps")
    parser.add_argument("--out", default=str(ROOT / "bench" / "results.md"))
    parser.add_argument("--sweep-child", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--search-mode", default="immediate", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.sweep_child:
        print(json.dumps(sweep_child(args.sweep_child, args.search_mode, args.max_runs, args.interval)))
        return 0
    info = {"machine": machine(), "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
            "command": "python bench/run.py " + " ".join(argv if argv is not None else sys.argv[1:])}
    with tempfile.TemporaryDirectory(prefix="ptd-bench-") as tmp:
        work = Path(tmp)
        installs = None if args.skip_install else bench_install(work, max(1, args.repeats // 2))
        runs = bench_runs(work, args.repeats, with_install=not args.skip_install)
    sweeps = [] if args.skip_sweep else [bench_sweep(args.sweep_issues, mode.strip(), args.max_runs, args.interval)
                                         for mode in args.search_modes.split(",") if mode.strip()]
    info["load_end"] = "/".join(f"{x:.1f}" for x in os.getloadavg())
    report = markdown(info, installs, runs, sweeps)
    print(report)
    Path(args.out).write_text(report + kept_sections(Path(args.out)) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
