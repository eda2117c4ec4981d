"""`ptd-triage eval DATASET.jsonl [--key KEY.jsonl]`: replay a labelled dataset through the planner and print
accuracy figures against the labels people gave (`gold`), on the whole dataset and on its two fixed halves, and,
with `--key`, against a procedure answer key (`examples/answer-keys/`) joined by `id`, with the high-priority
operating point (recall and false-flag rate over a range of thresholds).

Exit status: 0 whatever the figures (measuring is not judging), 1 when a `--min-*` minimum is set and not met,
2 on bad input (one line naming the file and line, from the one error handler). `ptd-triage replay` prints the
same report (`triage.cli.measuring`) for issues it rebuilt from a live repository.
"""

from __future__ import annotations

import argparse

from triage.cli.common import (CliError, add_config_options, add_planner_options, check_model_prompt, load_config,
                               planner_from_args, run_command)
from triage.cli.measuring import add_report_arguments, check_key_joins, key_from_args, model_figures, report
from triage.evaluation.cases import plan_rows
from triage.evaluation.dataset import check_routes, read_dataset
from triage.evaluation.gold import gold_routes


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "eval",
        help="measure the rubric on a labelled dataset (JSONL)",
        description="Plan every line of an eval-format dataset as if the queue label had just been added, and "
        "compare the labels the plans add with the gold answers.",
    )
    parser.add_argument("dataset", metavar="DATASET.jsonl", help="eval-format dataset, one issue a line")
    add_config_options(parser)
    add_report_arguments(parser)
    add_planner_options(parser)
    parser.add_argument("--record", metavar="DIR", help="save the model's replies to DIR (with --planner llm|hybrid)")
    parser.add_argument("--replay", metavar="DIR", help="answer from replies saved with --record: offline, free")
    parser.set_defaults(func=lambda args: run_command(run, args))


def run(args: argparse.Namespace) -> int:
    bundle = load_config(args)  # issue 9: --config DIR or a repository config, as every command
    rows = read_dataset(args.dataset)
    check_routes(rows, gold_routes(bundle), args.dataset)
    key = key_from_args(args, bundle)
    check_key_joins(rows, key, args, args.dataset)  # before planning: a key for another dataset costs nothing
    if args.record and args.replay:
        raise CliError("--record and --replay cannot be used together")
    planner = planner_from_args(args, record=args.record, replay=args.replay)
    check_model_prompt(planner, bundle)  # as plan and sweep: else every ask fails and the rubric is measured
    cases = plan_rows(rows, bundle, planner=planner)
    totals = planner.usage_totals()  # issue 8: a model planner's calls, tokens, cost, latency
    extra = {"planner": planner.name, "model": model_figures(totals, len(cases), cases)} if totals is not None \
        else None
    return report(cases, bundle, args, source=args.dataset, key=key, extra=extra)
