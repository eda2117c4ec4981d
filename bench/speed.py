#!/usr/bin/env python3
"""Speed on this machine: planning one issue, the CLI's start-up, and the entrypoint's cold start on an event that
is not for it. A benchmark, not a test: it prints a markdown table and asserts nothing (these were wall-clock
limits in the test suite, tests/test_speed.py and a cold-start test, which failed on a busy machine for reasons that
had nothing to do with the code).

    .venv/bin/python bench/speed.py [--plans 200] [--runs 5] [--dataset ../shared/eval/dev.jsonl]

The targets it reports against: a mean of at most 5 ms per issue over a real queue's issues (`--dataset`, by
default the dev set beside the checkout when it is there; its CPU time too, which a busy machine moves less);
planning the representative long issue well under 10 ms (a sweep of 50 spends its time on GitHub, not
here); the CLI answering `--help` and planning one file in under 1.5 s; an ignored event over in under 0.5 s.
"""
from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))


def _representative():
    """A long issue: code, a 20-frame traceback, a launch command and three environment dumps."""
    from engine_helpers import fenced

    return (
        "FSDP2 fully_shard hangs in all_gather after resuming from a DCP checkpoint",
        "Training a transformer with FSDP2 on 2 nodes x 8 GPUs. After `dcp.load` the first forward hangs.\n\n"
        + fenced("""
    import torch
    import torch.distributed as dist
    import torch.distributed.checkpoint as dcp
    from torch.distributed.fsdp import fully_shard
    dist.init_process_group("nccl")
    for block in model.layers:
        fully_shard(block)
    fully_shard(model)
    dcp.load({"model": model.state_dict()}, checkpoint_id="/ckpt/step_1000")
    loss = model(batch).sum()
    loss.backward()
    """)
        + "\n\n```\nTraceback (most recent call last):\n"
        + "".join(f'  File "/opt/torch/distributed/fsdp/_fully_shard/_fsdp_param_group.py", line {n}, in unshard\n' for n in range(20))
        + "torch.distributed.DistBackendError: Watchdog caught collective operation timeout: WorkNCCL(SeqNum=88, OpType=_ALLGATHER_BASE)\n```\n\n"
        + "Launched with `torchrun --nnodes 2 --nproc_per_node 8 train.py`.\n\n### Versions\n\nPyTorch version: 2.6.0\nNCCL version 2.21.5\n" * 3,
    )


def plan_timings(count: int) -> list[float]:
    from engine_helpers import bundle, rest_comment, snap

    from triage.planners import plan_issue

    b = bundle()
    issue = snap(*_representative(), comments=["Same here on 4 nodes.",
                                            rest_comment("ci bot text", login="ci[bot]", user_type="Bot")])
    plan_issue(issue, b)  # warm up (pattern caches)
    out = []
    for _ in range(count):
        started = time.perf_counter()
        plan_issue(issue, b)
        out.append((time.perf_counter() - started) * 1000.0)
    return out


def dataset_timings(path: Path, passes: int = 3) -> tuple[int, float, float]:
    """(issues, mean wall ms, mean CPU ms) per issue over every issue of an eval dataset, the best of `passes`."""
    from triage.config.bundle import load_bundle
    from triage.core.snapshot import snapshot_from_json
    from triage.planners import plan_issue

    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    issues = [snapshot_from_json({"issue": r["issue"], "comments": r.get("comments", [])}) for r in rows]
    b = load_bundle()
    for issue in issues[:5]:
        plan_issue(issue, b)  # warm up (pattern caches)
    wall, cpu = [], []
    for _ in range(passes):
        started, used = time.perf_counter(), time.process_time()
        for issue in issues:
            plan_issue(issue, b)
        wall.append((time.perf_counter() - started) * 1000.0 / len(issues))
        cpu.append((time.process_time() - used) * 1000.0 / len(issues))
    return len(issues), min(wall), min(cpu)


def cli_timings(runs: int, work: Path) -> dict[str, float]:
    from engine_helpers import rest_issue

    issue = work / "issue.json"
    issue.write_text(json.dumps(rest_issue("DDP hangs in backward", "model = DDP(m)")), encoding="utf-8")
    best = {}
    for name, args in {"--help": ["--help"], "plan one file": ["plan", str(issue)]}.items():
        for _ in range(runs):
            started = time.perf_counter()
            subprocess.run([sys.executable, "-m", "triage", *args], capture_output=True, check=True, timeout=120)
            elapsed = time.perf_counter() - started
            best[name] = min(best.get(name, elapsed), elapsed)
    return best


def cold_start(runs: int, work: Path) -> float:
    from actionrun import NOT_DISTRIBUTED, QUEUE, issues_payload, run_action, seed_issue
    from fakegithub import FakeGitHub

    with FakeGitHub() as fake:
        seed_issue(fake, 72, NOT_DISTRIBUTED, labels=(QUEUE, "bug"))
        payload = issues_payload(fake, 72, "labeled", label="bug")
        timings = []
        for _ in range(runs):
            started = time.perf_counter()
            run = run_action(fake, work, "issues", payload)
            timings.append(time.perf_counter() - started)
            assert run.returncode == 0 and run.outputs["outcome"] == "ignored", run.stdout + run.stderr
    return statistics.median(timings)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--plans", type=int, default=200)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--dataset", type=Path, default=ROOT.parent / "shared" / "eval" / "dev.jsonl",
                        help="an eval dataset (JSON lines) to plan every issue of; skipped when it is absent")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as temp:
        work = Path(temp)
        plans = plan_timings(args.plans)
        cli = cli_timings(args.runs, work)
        ignored = cold_start(args.runs, work)
    print("| what | figure | target |")
    print("| --- | --- | --- |")
    if args.dataset.is_file():
        count, wall, cpu = dataset_timings(args.dataset)
        print(f"| plan every issue of {args.dataset.name} | mean {wall:.2f} ms an issue ({cpu:.2f} ms of CPU), "
              f"{count} issues, best of 3 passes | at most 5 ms |")
    print(f"| plan one representative issue | mean {statistics.mean(plans):.2f} ms, median "
          f"{statistics.median(plans):.2f} ms, max {max(plans):.2f} ms ({args.plans} plans) | under 10 ms |")
    print(f"| `ptd-triage --help` | {cli['--help']:.3f} s (best of {args.runs}) | under 1.5 s |")
    print(f"| `ptd-triage plan FILE` | {cli['plan one file']:.3f} s (best of {args.runs}) | under 1.5 s |")
    print(f"| entrypoint, an ignored event | median {ignored:.3f} s of {args.runs} runs | under 0.5 s |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
