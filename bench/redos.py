"""Planning time on hostile text: the ReDoS corpus, generated issues at GitHub's size limits, a realistic issue.

    python bench/redos.py                   # the corpus, 1,000 generated issues, the realistic 1 KB issue
    python bench/redos.py --generated 50    # fewer generated issues (about 0.1-0.3 s each)

What it measures, each through the real planner (`triage.planners.plan_issue`) with the bundled configuration,
wall time (`time.perf_counter`) and CPU time (`time.process_time`, which other work on the machine
does not inflate) per plan, after one warm-up plan:
1. Every input of the corpus in tests/test_redos.py (issue 12's inputs, long runs of each character class,
   unclosed constructs, many lines, every field at its limit, a 10 MB body): each time, and the worst.
2. `--generated` issues at GitHub's limits: a 256-character title, a 65,536-character body and 0-6 comments of
   65,536 characters, each a random mix of the fragments the patterns look for (runs of 1 to 200 repeats):
   worst, 99th percentile, median.
3. A realistic 1 KB issue (an FSDP2 + DCP report with a script, a traceback and a Versions section): median of
   300 plans. The target (issue 12): no issue over 0.5 s, the realistic issue about 2 ms.

Imports: the standard library, the project (`triage`) and the test helpers (tests/test_redos.py, for the
corpus and the fragments; tests/engine_helpers.py). Nothing here is imported by the package or the tests.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from engine_helpers import rest_comment, snap  # noqa: E402
from test_redos import CORPUS, K64, issue_of, text_of  # noqa: E402

from triage.config.bundle import load_bundle  # noqa: E402
from triage.planners import plan_issue  # noqa: E402

REALISTIC_BODY = """\
When I wrap my model with FSDP2 `fully_shard` and save with `dcp.save`, rank 3 hangs and the job times out.

```python
import torch
import torch.distributed.checkpoint as dcp
from torch.distributed.fsdp import fully_shard
model = fully_shard(model)
dcp.save({"model": model.state_dict()}, checkpoint_id="/ckpt/step_100")
```

```
Traceback (most recent call last):
  File "/opt/torch/distributed/checkpoint/state_dict_saver.py", line 12, in save
torch.distributed.DistBackendError: NCCL error in: ProcessGroupNCCL.cpp:1970, unhandled system error
```

Launched with `torchrun --nproc_per_node 8 train.py` on one node. It worked with 2.4.

### Versions

PyTorch version: 2.5.0
Is debug build: False
CUDA used to build PyTorch: 12.4
[pip3] torch==2.5.0
"""


def timed(issue, bundle) -> float:
    started = time.perf_counter()
    plan_issue(issue, bundle)
    return time.perf_counter() - started


def cpu_timed(issue, bundle) -> float:
    started = time.process_time()  # CPU time: what the plan costs, whatever else the machine is doing
    plan_issue(issue, bundle)
    return time.process_time() - started


def generated(seed: int):
    rng = random.Random(seed)
    comments = [rest_comment(text_of(rng.randrange(2**32), K64), login=f"u{i}", cid=i + 1) for i in range(rng.randint(0, 6))]
    return snap(text_of(rng.randrange(2**32), 256), text_of(rng.randrange(2**32), K64), comments=comments)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--generated", type=int, default=1000, help="generated issues at GitHub's limits (default 1000)")
    parser.add_argument("--seed", type=int, default=12)
    args = parser.parse_args()

    bundle = load_bundle()
    plan_issue(snap("warm up", "DDP"), bundle)

    print(f"1. corpus ({len(CORPUS)} inputs), ms per plan (wall, CPU):")
    corpus = sorted(((timed(issue_of(spec), bundle), cpu_timed(issue_of(spec), bundle), name)
                     for name, spec in CORPUS.items()), reverse=True)
    for wall, cpu, name in corpus:
        print(f"   {wall * 1000:8.1f} {cpu * 1000:8.1f}  {name}")
    print(f"   worst: {corpus[0][0] * 1000:.1f} ms wall ({corpus[0][2]}); worst CPU {max(c[1] for c in corpus) * 1000:.1f} ms")

    if args.generated:
        walls, cpus = [], []
        started = time.perf_counter()
        for i in range(args.generated):
            issue = generated(args.seed * 1_000_003 + i)
            walls.append(timed(issue, bundle))
            cpus.append(cpu_timed(issue, bundle))
        print(f"2. {len(walls)} generated issues at GitHub's limits ({time.perf_counter() - started:.0f} s in all), ms per plan:")
        for label, times in (("wall", sorted(walls)), ("CPU ", sorted(cpus))):
            p99 = times[min(len(times) - 1, int(len(times) * 0.99))]
            print(f"   {label}: worst {times[-1] * 1000:.1f}, p99 {p99 * 1000:.1f}, median {statistics.median(times) * 1000:.1f}, "
                  f"over 0.5 s: {sum(t > 0.5 for t in times)}")

    realistic = snap("FSDP2 + DCP save hangs on rank 3", REALISTIC_BODY)
    runs = [timed(realistic, bundle) for _ in range(300)]
    print(f"3. realistic issue ({len(REALISTIC_BODY)} characters): median {statistics.median(runs) * 1000:.2f} ms, "
          f"min {min(runs) * 1000:.2f} ms over {len(runs)} plans")
    return 0


if __name__ == "__main__":
    sys.exit(main())
