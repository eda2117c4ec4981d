"""`ptd-triage plan FILE...`: plan issues offline, one JSON plan per line (or text with --format text)."""

from __future__ import annotations

import json
import sys

from triage.cli.common import add_config_options, fail
from triage.config.bundle import ConfigError, load_bundle
from triage.cli.inputs import read_snapshots
from triage.core.plan import Plan
from triage.core.snapshot import InputError


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "plan",
        help="plan issues offline (no token, no network)",
        description=(
            "Plan what the bot would add to each issue. FILE is a GitHub REST issue, a snapshot "
            '{"issue": ..., "comments": [...]}, an Actions event payload, or a .jsonl file with one of those per line.'
        ),
    )
    parser.add_argument("files", nargs="+", metavar="FILE")
    parser.add_argument("--format", choices=("json", "text"), default="json", help="json: one plan per line (default)")
    parser.add_argument("--force", action="store_true", help="re-triage even if the issue already carries the marker label")
    add_config_options(parser)
    parser.set_defaults(func=run)


def format_text(plan: Plan, title: str) -> str:
    lines = [f"#{plan.issue} {title}", f"  outcome:    {plan.outcome}"]
    lines.append(f"  sub-oncall: {plan.sub_oncall or '-'}")
    if plan.modules:
        lines.append(f"  modules:    {', '.join(plan.modules)} ({plan.confidence} confidence)")
    lines.append(f"  add labels: {', '.join(plan.add_labels) if plan.add_labels else '(none)'}")
    lines.append(f"  comment:    {plan.comment.template if plan.comment else '(none)'}")
    lines.append("  why:")
    lines.extend(f"    - {reason}" for reason in plan.reasons)
    return "\n".join(lines)


def run(args) -> int:
    from triage.planners.rubric import plan_issue

    try:
        bundle = load_bundle(args.rubric, args.labels, args.templates)
        records = read_snapshots(args.files)
    except (ConfigError, InputError) as exc:
        return fail(str(exc))
    out = sys.stdout
    for index, (_, _, snapshot) in enumerate(records):
        plan = plan_issue(snapshot, bundle, force=args.force)
        if args.format == "json":
            out.write(json.dumps(plan.to_dict(), ensure_ascii=False) + "\n")
        else:
            out.write(("\n" if index else "") + format_text(plan, snapshot.title) + "\n")
    return 0
