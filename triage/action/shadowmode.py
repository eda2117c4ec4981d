"""The Action's `mode: shadow` (issue 32): how the bot would have triaged the queue over a window, against what
the repository's people did, with nothing written to GitHub (triage.evaluation.shadow; docs/shadow.md).

It needs only a read-only token (`issues: read`, `contents: read` for a repository configuration file) and runs on
a schedule or a dispatch. It writes two things, both on the runner: the step summary (the Markdown report, capped
under GitHub's limit, its long lists cut first) and the JSON report (`shadow-file`, default
$RUNNER_TEMP/ptd-triage-shadow.json, for actions/upload-artifact); the `shadow-file` output names it. With
`shadow-cache` (a folder, kept between runs by actions/cache) a run reads only the issues that changed.

Each issue skipped and each bad answer or cache file left out is a warning (the first WARNINGS of them, then one
line counting the rest: all are in the report). The run fails (exit 1, after writing both reports) when GitHub
failed midway or when the model asked for failed on an issue (`::error::`, as in the other modes: its plans are the
rubric's, and the report counts them so).

May import: the standard library, `triage.action.*`, `triage.evaluation.shadow`, `triage.evaluation.shadow_fetch`,
`triage.evaluation.shadow_render`, `triage.evaluation.shadow_markdown`.
"""
from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Mapping

from triage.action.context import check_model_prompt, github_client, load_bundle, planner_for_settings
from triage.action.limits import SUMMARY_CAP
from triage.action.queue_label_check import check_after_nothing_found
from triage.action.report import Reporter
from triage.action.settings import ActionError, Settings

DEFAULT_FILE = "ptd-triage-shadow.json"
WARNINGS = 10  # warning annotations per run (GitHub shows ten per step); the rest are counted in one more
EVENTS = ("schedule", "workflow_dispatch")


def shadow_path(settings: Settings, environ: Mapping[str, str]) -> Path:
    if settings.shadow_file:
        return Path(settings.shadow_file)
    return Path(environ.get("RUNNER_TEMP") or ".") / DEFAULT_FILE


def run_shadow(settings: Settings, environ: Mapping[str, str], reporter: Reporter, event: str) -> int:
    from triage.evaluation.shadow import Window, shadow, window_bounds
    from triage.evaluation.shadow_fetch import IssueCache
    from triage.evaluation.shadow_markdown import render_markdown
    from triage.evaluation.shadow_render import headline, run_errors, run_warnings

    if event not in EVENTS:
        raise ActionError(f"mode shadow runs on a schedule or a workflow_dispatch, not on '{event}': it measures a "
                          "window of the queue's history, not one event")
    try:
        since, until = window_bounds(settings.shadow_since or None, settings.shadow_until or None,
                                     names=("input shadow-since", "input shadow-until"))
    except ValueError as exc:
        raise ActionError(str(exc)) from None
    path = shadow_path(settings, environ)
    if path.is_dir() or not path.resolve().parent.is_dir():
        raise ActionError(f"input shadow-file {str(path)!r} is not a file in an existing folder")
    client = github_client(settings)
    bundle, source = load_bundle(settings, client)
    if settings.queue_label and settings.queue_label != bundle.labels.queue_label:  # the input wins, as elsewhere
        bundle = replace(bundle, labels=replace(bundle.labels, queue_label=settings.queue_label))
    planner = planner_for_settings(settings, environ)
    check_model_prompt(planner, bundle)
    cache = IssueCache(Path(settings.shadow_cache) if settings.shadow_cache else None, settings.repo)
    try:
        document, run = shadow(client, bundle, Window(settings.repo, since, until), cache=cache, planner=planner,
                               own_logins=(settings.bot_login,))
    except OSError as exc:
        raise ActionError(f"input shadow-cache {settings.shadow_cache!r}: {exc.strerror or exc}") from None
    if not run.found:  # issue 40: a misspelt queue label fails in one line, not "0 issues entered the queue"
        check_after_nothing_found(settings, client, bundle.labels.queue_label, reporter)
    document["queue"] = source
    reporter.write_file(path, json.dumps(document, indent=1, ensure_ascii=False) + "\n")
    reporter.write_summary(render_markdown(document, cap=SUMMARY_CAP - 4096, rest_in=str(path)))
    reporter.set_outputs({"shadow-file": str(path)})
    for line in headline(document):
        reporter.info(f"ptd-triage shadow: {line}")
    reporter.info(f"ptd-triage shadow: the report is in {path}; nothing was written to GitHub")
    warnings = run_warnings(document, cache="shadow-cache")
    for line in warnings[:WARNINGS]:
        reporter.warning(f"shadow: {line}")
    if len(warnings) > WARNINGS:
        reporter.warning(f"shadow: {len(warnings) - WARNINGS} more warning(s): every one is in {path}")
    failures = run_errors(document, cache="shadow-cache")
    for line in failures:
        reporter.error(f"shadow: {line}")
    return 1 if failures else 0
