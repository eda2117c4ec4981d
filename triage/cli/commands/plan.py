"""`ptd-triage plan FILE...`: plan issues offline, one JSON plan per line (or text with --format text).

Exit status: 0; 1 when a model planner (--planner llm/hybrid) failed on an issue (its plan is the rubric's, says
so in `planner` and `usage.fallback`, and one stderr line names the issue and the reason); 2 on bad input.
"""

from __future__ import annotations

import json
import sys

from triage.cli.common import (add_config_options, add_planner_options, check_model_prompt, load_config,
                               planner_from_args, run_command)
from triage.cli.inputs import read_snapshots
from triage.core.plan import Plan


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "plan",
        help="plan issues offline (no token, no network)",
        description=(
            "Plan what the bot would add to each issue. FILE is a GitHub REST issue, a snapshot "
            '{"issue": ..., "comments": [...]}, an Actions event payload, or a .jsonl file with one of those per line; '
            "- reads standard input (one of those, or one per line)."
        ),
    )
    parser.add_argument("files", nargs="+", metavar="FILE")
    parser.add_argument("--format", choices=("json", "text"), default="json", help="json: one plan per line (default)")
    parser.add_argument("--force", action="store_true", help="re-triage even if the issue already carries the marker label")
    parser.add_argument("--queue-label", default=None, metavar="LABEL",
                        help="the label that puts an issue in the queue (default: the configuration's); an issue "
                             "without it is not planned, and the plan says why")
    parser.add_argument("--any-issue", action="store_true", help="plan issues even when they are not in the queue")
    add_config_options(parser)
    add_planner_options(parser)
    parser.set_defaults(func=lambda args: run_command(run, args))


def format_text(plan: Plan, title: str, words=None) -> str:
    """The plan for a person: the outcome in the queue's words (`words`, triage.config.words.QueueWords)."""
    lines = [f"#{plan.issue} {title}", f"  outcome:    {words.outcome(plan.outcome) if words else plan.outcome}"]
    team = f"{words.team if words else 'team'}:"  # the queue's word for it (rubric `words.team`)
    lines.append(f"  {team:<11} {plan.sub_oncall or '-'}")
    if plan.modules:
        lines.append(f"  modules:    {', '.join(plan.modules)} ({plan.confidence} confidence)")
    lines.append(f"  add labels: {', '.join(plan.add_labels) if plan.add_labels else '(none)'}")
    lines.append(f"  comment:    {plan.comment.template if plan.comment else '(none)'}")
    lines.append("  why:")
    lines.extend(f"    - {reason}" for reason in plan.explained)
    return "\n".join(lines)


def run(args) -> int:
    from triage.config.words import queue_words
    from triage.planners import plan_issue

    bundle = load_config(args)
    records = read_snapshots(args.files)  # all of them first: bad input fails before any output
    planner = planner_from_args(args)
    check_model_prompt(planner, bundle)
    out = sys.stdout
    words = queue_words(bundle.rubric.words, bundle.labels.queue_label)
    failed_model = 0
    for index, (_, _, snapshot) in enumerate(records):
        queue = args.queue_label or bundle.labels.queue_label
        if not args.any_issue and not snapshot.has_label(queue):
            plan = Plan(issue=snapshot.number, reasons=(
                f"not in the queue: the issue has no '{queue}' label (use --any-issue to plan it anyway)",))
            print(f"ptd-triage: #{snapshot.number} is not in the queue (no '{queue}' label)", file=sys.stderr)
        else:
            plan = plan_issue(snapshot, bundle, planner=planner, force=args.force)
            failed_model += _say_fallback(plan)
        if args.format == "json":
            out.write(json.dumps(plan.to_dict(), ensure_ascii=False) + "\n")
        else:
            out.write(("\n" if index else "") + format_text(plan, snapshot.title, words) + "\n")
    if failed_model:  # as in the Action: a model that was asked for and failed is not a silent success
        print(f"ptd-triage: error: the model failed on {failed_model} issue(s); their plans are the rubric's",
              file=sys.stderr)
        return 1
    return 0


def _say_fallback(plan: Plan) -> int:
    """One stderr line when the model's plan was not used (the plan itself says so in `usage.fallback`); 1 when
    that was a failure of the model, 0 when it was the call budget (--llm-max-calls: a limit the user set), from
    the plan's typed fallback."""
    if plan.fallback is None:
        return 0
    print(f"ptd-triage: #{plan.issue}: the model's plan was not used, the rubric's plan stands: "
          f"{plan.fallback.reason}", file=sys.stderr)
    return 1 if plan.fallback.failed else 0
