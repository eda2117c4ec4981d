"""Timelines: the steps of a queue's life, the simulator that performs them and checks the promises after each,
and the random timeline generator.

A step is a plain tuple `(kind, {args})` so a failing timeline prints as something you can paste into a test.
Kinds:
  open       {n, text, queued}     a reporter opens an issue (with the queue label when `queued`: GitHub then
                                   sends `labeled`, which the README's workflow subscribes to)
  label      {n, label, actor}     a person adds a label (the workflow receives `labeled` for it)
  unlabel    {n, label, actor}     a person removes a label (no run: `unlabeled` is not subscribed)
  comment    {n, author, kind, body}   a reporter, maintainer or bot comments (no run: the workflow's `if:` skips it)
  retriage   {n, role}             someone with `role` comments `/ptd-retriage` (queues an issue_comment run)
  deliver    {n}                   the issue's oldest queued run starts, with the payload captured at its event
  with_sweep {n}                   the issue's queued run and a scheduled sweep start at the same moment
  together   {n}                   the issue's two queued runs start at once (a workflow without the group)
  sweep      {max}                 the schedule fires
  dispatch   {n, force}            workflow_dispatch with issue-number (and the force input)
  rerun      {i}                   "Re-run jobs" on the i-th earlier run: same payload, next attempt
  wait       {seconds}             time passes
  fault      {kind, ...}           the next run meets GitHub failing: 5xx, 429, secondary limit, or death after n
                                   requests (`kill`)

How runs are scheduled is what the README's workflows make GitHub do: runs for one issue share the group
`ptd-triage-issue-N` (one at a time; at most one more waits, and a newer event replaces the waiting one), the
sweep has its own group, and so can overlap any issue's run (`with_sweep`). `together` is a workflow set up
WITHOUT the group, which the README's workflows are not: random timelines do not use it (the comment claim keeps
it to one comment, measured in docs/duplicates-and-concurrency.md).

May import: the standard library, `actionrun`, `sim.*`.
"""
from __future__ import annotations

import random
from dataclasses import dataclass, field

from actionrun import (FSDP_WITH_REPRO, MARKER, NEEDS_REPRO, NOT_DISTRIBUTED, QUEUE, REPO, comment_payload,
                       dispatch_payload, issues_payload, schedule_payload)
from sim import invariants as inv
from sim.driver import Driver, Launch, RunRecord

TEXTS = {
    "not_distributed": NOT_DISTRIBUTED,
    "needs_repro": NEEDS_REPRO,
    "fsdp_repro": FSDP_WITH_REPRO,
    "hp_no_repro": ("FSDP2 training crashes with illegal memory access after upgrade",
                    "Since 2.5 my FSDP2 fully_shard training crashes with CUDA illegal memory access during backward. "
                    "It worked in 2.4, so this is a regression. Many users on our team are affected."),
    "hp_repro": ("FSDP silently wrong gradients with reduce_scatter regression",
                 "Gradients are silently wrong after FSDP reduce_scatter; worked in 2.4.\n\n```python\nimport torch\n"
                 "from torch.distributed.fsdp import fully_shard\nm = torch.nn.Linear(4,4)\nfully_shard(m)\n```\n"),
    "infra": ("torchrun rendezvous timeout with c10d backend",
              "torchrun --nnodes 2 --rdzv-backend c10d fails with a rendezvous timeout.\n\n```\ntorchrun --nnodes=2 "
              "--nproc-per-node=8 --rdzv-backend=c10d train.py\n```\n"),
    "vague": ("distributed training question", "How do I use distributed training? It does not work for me."),
}
ROLES = ("admin", "maintain", "write", "triage", "read", "none", "bot")
PRIVILEGED = ("admin", "maintain", "write", "triage")
PEOPLE_LABELS = (QUEUE, MARKER, inv.REVIEW, "module: fsdp", "module: c10d", "needs reproduction") + inv.SUB_ONCALLS
COMMENTS = {
    "reporter": ("reporter", "Here is a repro:\n\n```python\nimport torch.distributed as dist\ndist.init_process_group('nccl')\n```\n"),
    "maintainer": ("maintainer", "Thanks, looking into it."),
    "bot": ("pytorch-bot[bot]", "This issue was labelled by the PT-level triage bot."),
    "marker_paste": ("reporter", "quoting the bot: <!-- ptd-triage:needs_distributed_reproduction -->"),
}


class InvariantBroken(AssertionError):
    pass


@dataclass
class Sim:
    fake: object
    driver: Driver
    allowlist: frozenset
    check_budget: bool = True
    issues: list[int] = field(default_factory=list)
    pending: dict[int, list[Launch]] = field(default_factory=dict)
    history: list[Launch] = field(default_factory=list)
    records: list[RunRecord] = field(default_factory=list)
    log: list[str] = field(default_factory=list)
    next_fault: dict | None = None
    acted: dict = field(default_factory=dict)  # issue -> number of its events when a person last acted on it
    _mark: int = 0

    # ---- performing steps --------------------------------------------------------------------------------------

    def do(self, step: tuple) -> list[RunRecord]:
        kind, args = step
        holds = {n for n in inv.held(self.fake, self.issues) if self.acted.get(n, -1) < inv.flagged_at(self.fake, n)}
        before = {n: set(self.fake.issue_labels(REPO, n)) for n in self.issues}
        touched: set[int] = set()
        records = getattr(self, "_" + kind)(touched=touched, **args)
        self.log.append(f"{step!r} -> " + ", ".join(f"{r.launch.label}: exit {r.returncode} {r.outcome}"
                                                     f" ({len(r.requests)} calls)" for r in records))
        problems = inv.duplicate_comments(self.fake, self.issues)
        problems += inv.forbidden_requests(self.fake.requests[self._mark:], self.allowlist)
        problems += inv.state_violations(self.fake, self.issues)
        problems += inv.released_holds(self.fake, holds, touched)
        for n in touched:  # a person acted on it: whatever the bot flagged before is theirs now
            self.acted[n] = len(self.fake.events(REPO, n))
        if records:  # only runs happened in this step: no label may have gone
            problems += inv.removed_labels(before, self.fake)
        if self.check_budget and records and not records[0].shared and self.next_fault is None \
                and not getattr(self, "_faulted", False):
            for record in records:
                problems += inv.over_budget(record, self._sweep_size(record))
        self._faulted = False
        self._mark = len(self.fake.requests)
        self.records.extend(records)
        if problems:
            raise InvariantBroken("\n".join(problems))
        return records

    def _sweep_size(self, record: RunRecord) -> int:
        plans = record.outputs.get("plan", "")
        return len(self.issues) if plans else 0

    def settle(self) -> None:
        """The queue's life goes on quietly: every queued run starts, time passes, sweeps run until nothing is left;
        then every queued issue must be processed or waiting for a person."""
        self.next_fault = None
        self.fake.clear_faults()
        self.fake.kill_after(None)
        for n in list(self.pending):
            while self.pending.get(n):
                self.do(("deliver", {"n": n}))
        for _ in range(3):
            self.do(("wait", {"seconds": 6 * 3600}))
            record = self.do(("sweep", {"max": 1000}))[0]
            if record.returncode == 0 and not any(r.method != "GET" for r in record.requests):
                break
        problems = inv.unfinished(self.fake, self.issues)
        if problems:
            raise InvariantBroken("\n".join(problems))

    # ---- the world's events ------------------------------------------------------------------------------------

    def _queue(self, n: int, launch: Launch) -> None:
        waiting = self.pending.setdefault(n, [])
        if len(waiting) >= 2:  # GitHub keeps one running and one pending per group: the newer replaces
            waiting[-1] = launch
        else:
            waiting.append(launch)

    def _open(self, touched, n: int, text: str, queued: bool = True) -> list:
        title, body = TEXTS[text]
        self.fake.add_issue(REPO, n, title=title, body=body, labels=[QUEUE] if queued else [])
        self.issues.append(n)
        if queued:
            self._queue(n, Launch("issues", issues_payload(self.fake, n, "labeled", label=QUEUE), label=f"labeled #{n}"))
        return []

    def _label(self, touched, n: int, label: str, actor: str = "maintainer") -> list:
        touched.add(n)
        if self.fake.person_adds_label(REPO, n, label, actor):
            self._queue(n, Launch("issues", issues_payload(self.fake, n, "labeled", label=label),
                                  label=f"labeled {label!r} #{n}"))
        return []

    def _unlabel(self, touched, n: int, label: str, actor: str = "maintainer") -> list:
        touched.add(n)
        self.fake.person_removes_label(REPO, n, label, actor)
        return []

    def _comment(self, touched, n: int, kind: str) -> list:
        author, body = COMMENTS[kind]
        self.fake.add_comment(REPO, n, body, author=author, author_type="Bot" if author.endswith("[bot]") else "User")
        return []

    def _retriage(self, touched, n: int, role: str) -> list:
        login = f"{role}-person" if role != "bot" else "helper[bot]"
        if role != "bot":
            self.fake.set_role(REPO, login, role)
        comment = self.fake.add_comment(REPO, n, "/ptd-retriage", author=login,
                                        author_type="Bot" if role == "bot" else "User")
        if role in PRIVILEGED:
            touched.add(n)  # a person with the right acted on the issue
        self._queue(n, Launch("issue_comment", comment_payload(self.fake, n, comment), label=f"/ptd-retriage by {role} #{n}"))
        return []

    def _wait(self, touched, seconds: float) -> list:
        self.fake.age(seconds)
        return []

    def _fault(self, touched, kind: str, **args) -> list:
        self.next_fault = dict(kind=kind, **args)
        return []

    # ---- runs --------------------------------------------------------------------------------------------------

    def _arm_fault(self) -> None:
        fault, self.next_fault = self.next_fault, None
        if fault is None:
            return
        self._faulted = True
        kind = fault["kind"]
        if kind == "kill":
            self.fake.kill_after(fault["after"])
            return
        path = {"comment": rf"/repos/{REPO}/issues/\d+/comments", "labels": rf"/repos/{REPO}/issues/\d+/labels",
                "issue": rf"/repos/{REPO}/issues/\d+", "search": "/search/issues"}[fault["where"]]
        method = "POST" if fault["where"] in ("comment", "labels") else "GET"
        if kind == "5xx":
            self.fake.inject(method, path, 502, times=fault.get("times", 1), after_effect=fault.get("after_effect", False))
        elif kind == "429":
            self.fake.inject(method, path, 429, headers={"retry-after": "1"}, times=fault.get("times", 1))
        elif kind == "secondary":
            self.fake.inject(method, path, 403, headers={"retry-after": "1"}, times=fault.get("times", 1),
                             body={"message": "You have exceeded a secondary rate limit. Please wait a few minutes "
                                              "before you try again.", "documentation_url": "https://docs.github.com/rest"})

    def _disarm(self) -> None:
        self.fake.kill_after(None)
        self.fake.clear_faults()

    def _start(self, launch: Launch) -> RunRecord:
        self._arm_fault()
        try:
            record = self.driver.run(launch)
        finally:
            self._disarm()
        self.history.append(launch)
        return record

    def _deliver(self, touched, n: int) -> list:
        if not self.pending.get(n):
            return []
        return [self._start(self.pending[n].pop(0))]

    def _sweep(self, touched, max: int = 50) -> list:
        inputs = {"max-issues": str(max)}
        return [self._start(Launch("schedule", schedule_payload(), inputs, label=f"sweep (max {max})"))]

    def _dispatch(self, touched, n: int, force: bool = False) -> list:
        inputs = {"issue-number": str(n)}
        if force:
            inputs["force"] = "true"
            touched.add(n)  # a person asked for exactly this issue
        payload = dispatch_payload(dict(inputs))
        return [self._start(Launch("workflow_dispatch", payload, inputs, label=f"dispatch #{n} force={force}"))]

    def _rerun(self, touched, i: int) -> list:
        if not self.history:
            return []
        launch = self.history[i % len(self.history)]
        if launch.event == "issue_comment":
            touched.add(launch.payload["issue"]["number"])  # the re-run repeats a privileged person's command
        if launch.event == "workflow_dispatch" and launch.inputs.get("force") == "true":
            touched.add(int(launch.inputs["issue-number"]))
        return [self._start(launch.with_attempt(launch.attempt + 1))]

    def _with_sweep(self, touched, n: int) -> list:
        if not self.pending.get(n):
            return self._sweep(touched)
        launch = self.pending[n].pop(0)
        sweep = Launch("schedule", schedule_payload(), {"max-issues": "50"}, label="sweep (max 50)")
        self.next_fault = None
        # The issue may have last changed over 10 minutes ago: the sweep then takes it too, and the comment claim
        # (triage.service.claim) is what keeps it to one comment (docs/duplicates-and-concurrency.md).
        records = self.driver.run_together(launch, sweep)
        self.history += [launch, sweep]
        return records

    def _together(self, touched, n: int) -> list:
        waiting = self.pending.get(n) or []
        if len(waiting) < 2:
            return self._deliver(touched, n)
        first, second = waiting.pop(0), waiting.pop(0)
        self.next_fault = None
        records = self.driver.run_together(first, second)
        self.history += [first, second]
        return records


# ---- random timelines ------------------------------------------------------------------------------------------


def random_timeline(seed: int, *, min_steps: int = 3, max_steps: int = 8) -> list[tuple]:
    """A timeline drawn from `seed`: a few issues opened, then people, time, failures and runs in random order.
    Only what the README's workflows allow: never two runs of one issue's group at once."""
    rng = random.Random(seed)
    steps: list[tuple] = []
    numbers = list(range(1, rng.randint(1, 3) + 1))
    for n in numbers:
        steps.append(("open", {"n": n, "text": rng.choice(sorted(TEXTS)), "queued": rng.random() < 0.85}))
    for _ in range(rng.randint(min_steps, max_steps)):
        n = rng.choice(numbers)
        roll = rng.random()
        if roll < 0.22:
            steps.append(("deliver", {"n": n}))
        elif roll < 0.30:
            steps.append(("with_sweep", {"n": n}))
        elif roll < 0.40:
            steps.append(("sweep", {"max": rng.choice((1, 2, 50))}))
        elif roll < 0.50:
            label = rng.choice(PEOPLE_LABELS)
            if label in inv.SUB_ONCALLS:  # people replace a sub-oncall, they do not stack a second one
                for other in inv.SUB_ONCALLS:
                    steps.append(("unlabel", {"n": n, "label": other, "actor": "maintainer"}))
            steps.append(("label", {"n": n, "label": label, "actor": "maintainer"}))
        elif roll < 0.58:
            steps.append(("unlabel", {"n": n, "label": rng.choice(PEOPLE_LABELS), "actor": "maintainer"}))
        elif roll < 0.66:
            steps.append(("comment", {"n": n, "kind": rng.choice(sorted(COMMENTS))}))
        elif roll < 0.74:
            steps.append(("retriage", {"n": n, "role": rng.choice(ROLES)}))
        elif roll < 0.78:
            steps.append(("dispatch", {"n": n, "force": rng.random() < 0.5}))
        elif roll < 0.83:
            steps.append(("rerun", {"i": rng.randrange(100)}))
        elif roll < 0.90:
            steps.append(("wait", {"seconds": rng.choice((30, 300, 900, 6 * 3600))}))
        else:
            kind = rng.choice(("5xx", "429", "secondary", "kill", "kill"))
            if kind == "kill":
                steps.append(("fault", {"kind": "kill", "after": rng.randint(0, 4)}))
            else:
                steps.append(("fault", {"kind": kind, "where": rng.choice(("comment", "labels", "issue", "search")),
                                        "times": rng.randint(1, 3), **({"after_effect": rng.random() < 0.5}
                                                                       if kind == "5xx" else {})}))
            steps.append(("deliver", {"n": n}) if rng.random() < 0.6 else ("sweep", {"max": 50}))
    return steps
