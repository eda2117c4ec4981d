"""Start-up: what a run costs before and around its plan, in an installed environment (a benchmark, not a test).

    python bench/startup.py                      # 7 runs of each; writes its section of bench/results.md
    python bench/startup.py --repeats 11 --before 4622f28   # also the same rows for an older commit

Every row is a fresh process, timed from outside (wall, and the CPU time of the child), median over `--repeats`
runs, in a venv made with `python -m venv` and `pip install .` of a copy of the checkout (non-editable: the
package is compiled and imported from site-packages, as a user's or the Action's is):
1. the baseline, in the same venv and the same run: `python -c pass`, and `import` of the dependencies;
2. loading each bundled queue (`load_bundle`), timed inside the process after the imports: warm (its compiled
   form in the venv, as action.yml builds it: `python -m triage.config.precompile`) and cold (an empty cache);
3. entrypoint.py with the runner's environment (`-P`, as action.yml runs it) against the GitHub stand-in
   (tests/fakegithub, on 127.0.0.1): an ignored event (`issues.labeled` with another label) and one queue issue
   end to end (`issues.labeled` with the queue label: a read and the label write), warm and with an empty cache;
4. `ptd-triage plan FILE` on hostile bodies, one process each: the three of the before-stop hook (a heading with
   65,000 spaces, 32,000 CRLF, "checkpoint" x 6,500), and every input of bench/redos.py's corpus
   (tests/test_redos.py) that fits in one 64 KB issue body; warm.

The machine's load average is printed at the start and the end; wall times move with it, CPU times much less.

Imports: the standard library; bench/run.py (the machine, the clock, the runner's environment) and the test
helpers (tests/fakegithub, tests/actionrun, tests/test_redos) for the stand-in, the payloads and the corpus.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BENCH = Path(__file__).resolve().parent
sys.path[:0] = [str(BENCH)]

import run as common  # noqa: E402  (bench/run.py: it puts the checkout and tests/ on sys.path)

ROOT = common.ROOT
DEPENDENCIES = "import yaml, jinja2, jsonschema, requests, urllib3, re2"
LOAD = ("import json, sys, time; t0 = time.perf_counter(); from triage.config.bundle import load_bundle; "
        "t1 = time.perf_counter(); load_bundle(queue=sys.argv[1]); t2 = time.perf_counter(); "
        "print(json.dumps([t1 - t0, t2 - t1]))")
HOOK_BODIES = {"hook: heading + 65,000 spaces": "# a" + " " * 65000 + "b", "hook: 32,000 CRLF": "\r\n" * 32000,
               "hook: checkpoint x 6,500 + corrupt": "checkpoint" * 6500 + "\ncorrupt"}
TEXT_LIMIT = 65_536  # GitHub's limit on an issue body (triage.core.snapshot clips at it)


def install(tree: Path, venv: Path) -> Path:
    """`python -m venv` + `pip install .` (non-editable) of `tree`; the venv's python."""
    subprocess.run([common.base_python(), "-m", "venv", str(venv)], check=True, capture_output=True)
    python = common.venv_python(venv)
    subprocess.run([str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", str(tree)],
                   check=True, capture_output=True, text=True)
    return python


def checkout(ref: str | None, dest: Path) -> Path:
    """A copy of the Action's files: of the working tree, or of the commit `ref` (git archive)."""
    if ref is None:
        return common.copy_action(dest)
    dest.mkdir(parents=True)
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", ref, *common.ACTION_FILES], check=True,
                             capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(dest)], input=archive, check=True)
    return dest


def runs(cmd: list[str], repeats: int, *, env: dict | None = None, cwd: Path | None = None,
         before=None) -> dict:
    """Median and best wall time and median CPU of `repeats` runs of `cmd` (`before()` runs untimed first)."""
    walls, cpus, out = [], [], ""
    for _ in range(repeats):
        if before is not None:
            before()
        clock = common.Clock()
        proc = subprocess.run(cmd, env=env, cwd=cwd, capture_output=True, text=True, timeout=300)
        wall, cpu = clock.stop()
        if proc.returncode != 0:
            raise RuntimeError(f"{cmd[-1]} exited {proc.returncode}: {(proc.stdout + proc.stderr)[-600:]}")
        walls.append(wall)
        cpus.append(cpu)
        out = proc.stdout
    return {"wall": statistics.median(walls), "best": min(walls), "cpu": statistics.median(cpus), "stdout": out,
            "runs": repeats}


def clean_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PTD_", "VIRTUAL_ENV", "PYTHON"))}
    return {**env, **extra}


def bench_environment(label: str, tree: Path, work: Path, repeats: int) -> dict:
    """Every row for one installed environment."""
    from actionrun import FSDP_WITH_REPRO, NEEDS_REPRO, issues_payload, seed_issue
    from fakegithub import FakeGitHub

    work.mkdir(parents=True, exist_ok=True)
    venv = work / "venv"
    python = install(tree, venv)
    precompile = subprocess.run([str(python), "-P", "-m", "triage.config.precompile"], capture_output=True,
                                text=True, env=clean_env(), cwd=work)
    has_cache = precompile.returncode == 0  # an older commit has no compiled form
    empty = work / "empty-cache"
    cold = clean_env(PTD_TRIAGE_CACHE=str(empty))

    def emptied() -> None:
        shutil.rmtree(empty, ignore_errors=True)
        empty.mkdir()

    out: dict = {"label": label, "has_cache": has_cache, "python": common._version([str(python), "--version"])}
    out["pass"] = runs([str(python), "-c", "pass"], repeats, env=clean_env(), cwd=work)
    out["deps"] = runs([str(python), "-c", DEPENDENCIES], repeats, env=clean_env(), cwd=work)
    out["load"] = {}
    queues = json.loads(subprocess.run([str(python), "-P", "-c", "import json; from triage.config.bundle import "
                                        "bundled_queues; print(json.dumps(bundled_queues()))"], check=True,
                                       capture_output=True, text=True, cwd=work).stdout)
    states = (("warm", clean_env(), None), ("cold", cold, emptied))
    for queue in queues:
        times: dict[str, list] = {"warm": [], "cold": []}
        for _ in range(repeats):  # warm and cold interleaved: both see the same load on a shared machine
            for state, env, before in states:
                times[state].append(json.loads(runs([str(python), "-P", "-c", LOAD, queue], 1, env=env, cwd=work,
                                                    before=before)["stdout"]))
        for state, found in times.items():
            out["load"][(queue, state)] = {"import": statistics.median(t[0] for t in found),
                                           "load": statistics.median(t[1] for t in found),
                                           "best": min(t[1] for t in found)}
    with FakeGitHub() as fake:
        seed_issue(fake, 1, NEEDS_REPRO, labels=("bug", common.QUEUE))
        ignored = issues_payload(fake, 1, "labeled", label="bug", repo=common.REPO)
        number = [100]

        def issue_env(env: dict) -> dict:
            number[0] += 1
            seed_issue(fake, number[0], FSDP_WITH_REPRO if number[0] % 2 else NEEDS_REPRO)
            payload = issues_payload(fake, number[0], "labeled", label=common.QUEUE, repo=common.REPO)
            return {**env, **common.runner_env(fake, tree, work / f"run-{number[0]}", "issues", payload)}

        entry = [str(python), "-P", str(tree / "entrypoint.py")]
        ignored_env = {**clean_env(), **common.runner_env(fake, tree, work / "ignored", "issues", ignored)}
        out["ignored"] = runs(entry, repeats, env=ignored_env, cwd=work)
        measured: dict[str, list] = {"warm": [], "cold": []}
        for _ in range(repeats):
            for state, env, before in states:
                if before is not None:
                    before()
                result = runs(entry, 1, env=issue_env(env), cwd=work)
                if "ptd-bot-triaged" not in result["stdout"]:
                    raise RuntimeError(f"the issue was not triaged: {result['stdout'][-400:]}")
                measured[state].append(result)
        for state, found in measured.items():
            out[f"issue_{state}"] = {"wall": statistics.median(r["wall"] for r in found),
                                     "best": min(r["wall"] for r in found),
                                     "cpu": statistics.median(r["cpu"] for r in found), "runs": repeats}
    out["hostile"] = bench_hostile(python, work / "hostile", repeats)
    return out


def hostile_inputs() -> dict[str, dict]:
    """The hook's three bodies and the redos corpus's inputs that fit one issue body (title "FSDP")."""
    from test_redos import CORPUS

    found = {name: {"body": body} for name, body in HOOK_BODIES.items()}
    for name, spec in CORPUS.items():
        if set(spec) == {"body"} and len(spec["body"]) <= TEXT_LIMIT:
            found[f"redos: {name}"] = spec
    return found


def bench_hostile(python: Path, work: Path, repeats: int) -> list[dict]:
    work.mkdir(parents=True)
    cli = python.parent / "ptd-triage"
    rows = []
    for index, (name, spec) in enumerate(hostile_inputs().items()):
        path = work / f"{index}.json"
        path.write_text(json.dumps({"number": 1, "title": spec.get("title", "FSDP"), "body": spec["body"],
                                    "labels": [{"name": common.QUEUE}]}), encoding="utf-8")
        result = runs([str(cli), "plan", str(path)], repeats, env=clean_env(), cwd=work)
        rows.append({"name": name, "chars": len(spec["body"]), **result})
    return rows


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:.0f} ms"


def _s(seconds: float) -> str:
    return f"{seconds:.3f} s"


def markdown(info: dict, envs: list[dict]) -> str:
    m = info["machine"]
    lines = ["## Start-up (bench/startup.py)", "",
             f"Measured {info['date']} with `{info['command']}`: {m['nproc']} CPU(s), {m['cpu']}; Python "
             f"{m['python']}. Load average (1/5/15 min) at the start: {m['load']}; at the end: {info['load_end']}. "
             f"Each row: a fresh process, median of {info['repeats']} (best in brackets); CPU is the child's user + "
             "system time. Every environment is a venv with a non-editable `pip install .`.", ""]
    for env in envs:
        lines += [f"### {env['label']}", "",
                  "| What | Target | Wall (median, best) | CPU |", "| --- | --- | --- | --- |",
                  f"| baseline: `python -c pass` | - | {_s(env['pass']['wall'])} ({_s(env['pass']['best'])}) | "
                  f"{_s(env['pass']['cpu'])} |",
                  f"| baseline: `python -c \"{DEPENDENCIES}\"` | - | {_s(env['deps']['wall'])} "
                  f"({_s(env['deps']['best'])}) | {_s(env['deps']['cpu'])} |",
                  f"| entrypoint.py: an ignored event (another label) | 0.25 s | {_s(env['ignored']['wall'])} "
                  f"({_s(env['ignored']['best'])}) | {_s(env['ignored']['cpu'])} |"]
        for state, what in (("warm", "compiled queue in the venv"), ("cold", "empty cache")):
            if not env["has_cache"] and state == "warm":
                continue
            row = env[f"issue_{state}"]
            target = "0.5 s" if state == "warm" or not env["has_cache"] else "-"
            what = what if env["has_cache"] else "this commit has no compiled form"
            lines.append(f"| entrypoint.py: one queue issue end to end ({what}) | {target} | {_s(row['wall'])} "
                         f"({_s(row['best'])}) | {_s(row['cpu'])} |")
        lines += ["", "Loading a bundled queue, inside the process (`load_bundle`, after its imports; the import of "
                  "`triage.config.bundle` beside it):", "",
                  "| Queue | Compiled form | Target | Load (median, best) | Import of triage.config.bundle |",
                  "| --- | --- | --- | --- | --- |"]
        for (queue, state), row in env["load"].items():
            if not env["has_cache"] and state == "warm":
                continue  # nothing to be warm with: the cold row is the only one
            have = "in the venv" if state == "warm" else "none (empty cache)"
            if not env["has_cache"]:
                have = "none (this commit has no compiled form)"
            target = "50 ms" if state == "warm" else "-"
            lines.append(f"| {queue} | {have} | {target} | {_ms(row['load'])} ({_ms(row['best'])}) | "
                         f"{_ms(row['import'])} |")
        worst = max(env["hostile"], key=lambda r: r["wall"])
        lines += ["", f"`ptd-triage plan` on hostile bodies, one process each (target 0.5 s): worst "
                  f"{_s(worst['wall'])} ({worst['name']}).", "",
                  "| Body | Characters | Wall (median, best) | CPU |", "| --- | --- | --- | --- |"]
        for row in env["hostile"]:
            lines.append(f"| {common.md_cell(row['name'])} | {row['chars']:,} | {_s(row['wall'])} ({_s(row['best'])}) "
                         f"| {_s(row['cpu'])} |")
        lines.append("")
    return "\n".join(lines)


START, END = "<!-- startup -->", "<!-- /startup -->"


def write_section(results: Path, section: str, start: str = START, end: str = END) -> None:
    """Put the section between its markers in bench/results.md (bench/run.py keeps it when it rewrites the file)."""
    text = results.read_text(encoding="utf-8") if results.exists() else "# ptd-triage benchmark\n"
    block = f"{start}\n{section.rstrip()}\n{end}"
    if start in text and end in text:
        text = text[:text.index(start)] + block + text[text.index(end) + len(end):]
    else:
        text = text.rstrip("\n") + "\n\n" + block + "\n"
    results.write_text(text, encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--before", metavar="REF", help="also measure this commit, in its own venv")
    parser.add_argument("--out", default=str(BENCH / "results.md"))
    args = parser.parse_args(argv)
    info = {"machine": common.machine(), "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
            "command": "python bench/startup.py " + " ".join(argv if argv is not None else sys.argv[1:]),
            "repeats": args.repeats}
    envs = []
    with tempfile.TemporaryDirectory(prefix="ptd-startup-") as tmp:
        work = Path(tmp)
        trees = [("this change", None)] + ([(f"before: {args.before}", args.before)] if args.before else [])
        for label, ref in trees:
            tree = checkout(ref, work / f"tree-{len(envs)}")
            envs.append(bench_environment(label, tree, work / f"work-{len(envs)}", args.repeats))
    info["load_end"] = "/".join(f"{x:.1f}" for x in os.getloadavg())
    section = markdown(info, envs)
    print(section)
    write_section(Path(args.out), section)
    return 0


if __name__ == "__main__":
    sys.exit(main())
