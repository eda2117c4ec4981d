"""Measure the model planners without a model API: capture the prompts the project renders, have them answered
blind (by people or helper sessions, from the prompt alone), serve the answers back, and score rubric, llm and
hybrid side by side.

    python bench/model_answers.py capture DATASET.jsonl OUT/ [--config DIR] [--per-folder 60]
    python bench/model_answers.py check OUT/prompts/
    python bench/model_answers.py score DATASET.jsonl KEY.jsonl OUT/prompts/ [--config DIR] [--json FILE]
                                        [--hybrid-gate]
    python bench/model_answers.py serve OUT/prompts/ [--port-file FILE]     # the stand-in alone, until Ctrl-C
    python bench/model_answers.py cost OUT/prompts/ ANSWERS/ --price IN READ WRITE OUT [--schema-cached]
                                       [--share 0.643]                      # dollars per 100 issues
    python bench/model_answers.py mechanical OUT/prompts/ DATASET.jsonl     # harness test answers only
    python bench/model_answers.py archive OUT/prompts/ ARCHIVE/             # answers + prompt hashes, to keep

- `capture` strips the dataset to its issues (`{"issue", "comments"}`: no gold, no key), runs `ptd-triage plan
  --planner llm` on them against a loopback OpenAI-compatible stand-in that saves each request as
  `prompt-N.json` (the messages and the `response_format` with the answer schema) and refuses it (HTTP 400, so
  nothing is retried), and groups the files in folders of about 60 (`OUT/prompts/01/`, ...) with a README for
  whoever answers them and a manifest (issue numbers and the system prompt's sha256).
- An answer is `answer-N.json` beside `prompt-N.json`: the one JSON object the prompt asks for, valid against its
  schema and agreeing with itself. `check` says, per file, what is missing, invalid or contradictory, and which
  quotes are not words of the issue (a `no_flag` whose quote is not found cannot clear a rubric flag in hybrid).
- `score` serves the answers from a stand-in on 127.0.0.1 and runs `ptd-triage eval --key` three times (rubric,
  llm, hybrid; with `--hybrid-gate` a fourth, `hybrid-gate`: hybrid with `hybrid: {gate: true}` laid over the
  queue's rubric, asking only where the gate's triggers fire) on the same dataset, then prints one table:
  high-priority recall and false flags, right type on
  requests and a type on non-requests (the key's), routing and module F1 (people's labels), the share of issues
  that asked the model, and tokens. The stand-in checks every request against the captured prompt (sha256 of the
  system and user messages; a repair call extends the user message): an answer to a prompt that has changed since
  capture is refused and counted, never scored. Tokens are estimated (4 characters a token) and the stand-in plays
  OpenAI's automatic prefix cache (a system prompt it has seen, 1,024 tokens or more, is reported as cached in
  128-token blocks), so the columns show what the prompt costs, not what a provider billed.
- `cost` prices 100 issues of the captured kind from the prompts' sizes (system, user and schema, 4 characters a
  token) and the answers' (output): IN, READ, WRITE and OUT are a provider's list prices in US dollars per million
  tokens (input, cache read, cache write, output). The system prompt is the cached prefix, in 128-token blocks
  (`--schema-cached`: the answer schema too, as OpenAI caches it in front of the system message); "warm" is a run
  whose calls come within the cache's lifetime (one write, then reads), "cold" one where every call is past it (a
  write each time, or the full input price where writing is free). `--share`: the share of issues asked. Hidden
  reasoning or thinking tokens are not in the answers: add them at the output price.
- `mechanical` writes answers that repeat the rubric's own plan (quoting the title), for testing this harness
  only: they measure nothing.
- `archive` copies a folder's answers (flat, `answer-N.json`) with `prompts.sha256.json`: the sha256 of each
  prompt's system and user messages. The prompts are 30 KB each and are not kept; `score` on the archive checks
  every request against those hashes as it would against the prompts, so an archived answer to a prompt that has
  changed since is refused, never scored (bench/model-answers/ holds such archives).

Imports: the standard library and the project (`triage`). Nothing here is imported by the package or the tests
(tests/test_model_answers_harness.py runs it as a program).
"""
from __future__ import annotations

import argparse
import functools
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

REPAIR_MARK = "\n\nYour previous answer was rejected"
HASHES = "prompts.sha256.json"  # an archive's record of the prompts its answers answer (`archive`)
CHARS_PER_TOKEN = 4
CACHE_MIN, CACHE_BLOCK = 1024, 128  # OpenAI's automatic prompt cache: prefixes of 1,024+ tokens, 128-token steps
PLANNERS = ("rubric", "llm", "hybrid")
_NUMBER = re.compile(r"#(\d{1,9})\b")


# ---- the stand-in ----------------------------------------------------------------------------------------------

def sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def tokens(text: str) -> int:
    return (len(text) + CHARS_PER_TOKEN - 1) // CHARS_PER_TOKEN


def _messages(body: dict) -> tuple[str, str]:
    msgs = body.get("messages") or []
    system = "\n".join(m.get("content") or "" for m in msgs if m.get("role") in ("system", "developer"))
    user = "\n".join(m.get("content") or "" for m in msgs if m.get("role") == "user")
    return system, user


def issue_number(user: str) -> str | None:
    found = _NUMBER.search(user)
    return found.group(1) if found else None


def index(directory: Path, prefix: str) -> dict[str, Path]:
    """`prefix-N.json` files anywhere under `directory`, by N."""
    return {p.stem[len(prefix) + 1:]: p for p in sorted(directory.rglob(f"{prefix}-*.json"))}


class StandIn:
    """A loopback OpenAI-compatible Chat Completions server: `capture` saves prompts, `serve` answers from files."""

    def __init__(self, mode: str, directory: Path):
        self.mode, self.directory = mode, Path(directory)
        self.directory.mkdir(parents=True, exist_ok=True)
        self.counts = {"requests": 0, "answered": 0, "repairs": 0, "missing": 0, "changed": 0, "captured": 0}
        self.changed: list[str] = []
        self.seen_systems: set[str] = set()
        self.lock = threading.Lock()
        stand_in = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_POST(self):
                length = int(self.headers.get("content-length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                status, reply = stand_in.handle(body)
                data = json.dumps(reply).encode("utf-8")
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def __enter__(self) -> "StandIn":
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()

    def handle(self, body: dict) -> tuple[int, dict]:
        system, user = _messages(body)
        number = issue_number(user)
        with self.lock:
            self.counts["requests"] += 1
        if number is None:
            return _refuse("no issue number (#N) in the user message")
        if self.mode == "capture":
            return self._capture(number, body, system, user)
        return self._serve(number, body, system, user)

    def _capture(self, number: str, body: dict, system: str, user: str) -> tuple[int, dict]:
        document = {"issue": int(number), "system_sha256": sha(system), "user_sha256": sha(user),
                    "messages": body.get("messages"), "response_format": body.get("response_format")}
        (self.directory / f"prompt-{number}.json").write_text(json.dumps(document, indent=1, ensure_ascii=False)
                                                              + "\n", encoding="utf-8")
        with self.lock:
            self.counts["captured"] += 1
        return _refuse("captured (this stand-in records prompts and answers none)")

    def _captured(self, number: str) -> tuple[str, str] | None:
        """The captured prompt's (system sha256, user sha256): from `prompt-N.json`, else from an archive's
        `prompts.sha256.json`; None when neither has it."""
        prompt_file = index(self.directory, "prompt").get(number)
        if prompt_file is not None:
            captured = json.loads(prompt_file.read_text(encoding="utf-8"))
            return captured["system_sha256"], sha(_messages(captured)[1])
        hashes = self.archived().get(number)
        return None if hashes is None else (hashes["system_sha256"], hashes["user_sha256"])

    @functools.cache  # noqa: B019 (one stand-in a run: the archive's hashes are read once, not on every request)
    def archived(self) -> dict[str, dict]:
        """Every `prompts.sha256.json` under the directory, merged: issue number -> its prompt's hashes."""
        merged: dict[str, dict] = {}
        for manifest in sorted(self.directory.rglob(HASHES)):
            for number, hashes in json.loads(manifest.read_text(encoding="utf-8")).items():
                merged.setdefault(number, hashes)
        return merged

    def _serve(self, number: str, body: dict, system: str, user: str) -> tuple[int, dict]:
        answer = index(self.directory, "answer").get(number)
        captured = self._captured(number)
        if captured is not None:
            system_sha, user_sha = captured
            # A repair call extends the captured user message with REPAIR_MARK and what was wrong (the issue's own
            # text may hold the mark too: the captured message is the prefix, at one of its occurrences).
            cuts = [m.start() for m in re.finditer(re.escape(REPAIR_MARK), user)]
            repair = sha(user) != user_sha and any(sha(user[:i]) == user_sha for i in cuts)
            if sha(system) != system_sha or (sha(user) != user_sha and not repair):
                with self.lock:
                    self.counts["changed"] += 1
                    self.changed.append(number)
                return _refuse(f"issue {number}: the prompt differs from the one captured: its answer is not "
                               "for this prompt")
            if repair:
                with self.lock:
                    self.counts["repairs"] += 1
        if answer is None:
            with self.lock:
                self.counts["missing"] += 1
            return _refuse(f"no answer for issue {number}")
        content = answer.read_text(encoding="utf-8")
        with self.lock:
            self.counts["answered"] += 1
            cached = 0
            key = sha(system)
            if key in self.seen_systems and tokens(system) >= CACHE_MIN:
                cached = tokens(system) // CACHE_BLOCK * CACHE_BLOCK
            self.seen_systems.add(key)
        schema = json.dumps(body.get("response_format") or {})
        prompt_tokens = tokens(system) + tokens(user) + tokens(schema)
        usage = {"prompt_tokens": prompt_tokens, "completion_tokens": tokens(content),
                 "total_tokens": prompt_tokens + tokens(content),
                 "prompt_tokens_details": {"cached_tokens": cached}}
        return 200, {"id": f"chatcmpl-{number}", "object": "chat.completion", "created": 0,
                     "model": body.get("model", "answers"),
                     "choices": [{"index": 0, "finish_reason": "stop", "logprobs": None,
                                  "message": {"role": "assistant", "content": content, "refusal": None}}],
                     "usage": usage}


def _refuse(message: str) -> tuple[int, dict]:
    # 400: a bad request is never retried, so a missing answer costs one call and the rubric plans the issue.
    return 400, {"error": {"message": message, "type": "invalid_request_error", "code": None, "param": None}}


# ---- capture ---------------------------------------------------------------------------------------------------

def strip_gold(dataset: Path, out: Path) -> list[int]:
    """The dataset's issues and comments only, one snapshot a line; the issue numbers in order."""
    numbers, lines = [], []
    for line in dataset.read_text(encoding="utf-8").splitlines():
        if line.strip():
            row = json.loads(line)
            lines.append(json.dumps({"issue": row["issue"], "comments": row.get("comments", [])}, ensure_ascii=False))
            numbers.append(int(row["issue"]["number"]))
    if len(set(numbers)) != len(numbers):
        raise SystemExit(f"{dataset}: issue numbers repeat; prompts are keyed by issue number")
    out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return numbers


def ptd_triage(args: list[str], env_extra: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    env = dict(os.environ, OPENAI_API_KEY="answers-from-files", **(env_extra or {}))
    return subprocess.run([sys.executable, "-m", "triage", *args], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=3600)


def model_options(url: str) -> list[str]:
    return ["--llm-provider", "openai", "--llm-model", "answers", "--llm-base-url", url,
            "--llm-max-calls", "1000000"]


def capture(dataset: Path, out: Path, config: str | None, per_folder: int) -> int:
    prompts = out / "prompts"
    if prompts.exists() and any(prompts.rglob("prompt-*.json")):
        raise SystemExit(f"{prompts}: holds prompts already; capture into an empty folder")
    with tempfile.TemporaryDirectory() as tmp:
        issues = Path(tmp) / "issues.jsonl"
        numbers = strip_gold(dataset, issues)
        raw = Path(tmp) / "raw"
        with StandIn("capture", raw) as stand_in:
            run = ptd_triage(["plan", str(issues), "--any-issue", "--planner", "llm", *model_options(stand_in.url),
                              *(["--config", config] if config else [])])
        captured = index(raw, "prompt")
        missing = [n for n in numbers if str(n) not in captured]
        if missing:
            print(f"capture: {len(missing)} issue(s) were not put to the model (step 0 stopped, or the run "
                  f"failed): {missing[:10]}\n{run.stderr[-2000:]}", file=sys.stderr)
        systems = {json.loads(p.read_text(encoding="utf-8"))["system_sha256"] for p in captured.values()}
        kept = [n for n in numbers if str(n) in captured]
        folders = max(1, -(-len(kept) // per_folder))  # as few folders as hold `per_folder`, evenly filled
        for i, number in enumerate(kept):
            folder = prompts / f"{i * folders // len(kept) + 1:02d}"
            folder.mkdir(parents=True, exist_ok=True)
            shutil.copy(captured[str(number)], folder / f"prompt-{number}.json")
    (prompts / "manifest.json").write_text(json.dumps({
        "dataset": dataset.name, "issues": kept, "folders": folders,
        "system_sha256": sorted(systems), "not_asked": missing}, indent=1) + "\n", encoding="utf-8")
    (prompts / "README.md").write_text(ANSWERING, encoding="utf-8")
    print(f"capture: {len(kept)} prompts of {len(numbers)} issues in {prompts} "
          f"({folders} folders; {len(systems)} distinct system prompt(s))")
    return 0 if not missing and len(systems) == 1 else 1


ANSWERING = """# Answering these prompts

Each `prompt-N.json` is one request the triage bot would send a model about issue N: `messages` (a system message
with the procedure, a user message with the issue between fences) and `response_format` (the JSON Schema of the
answer). Write `answer-N.json` beside it: ONE JSON object, nothing around it, that

- matches `response_format.json_schema.schema` exactly (every key, only those keys, values from the enums);
- agrees with itself as the system message's output contract says (a flag names a criterion and the
  no_flag_reason `none`; a `no_flag` names no criterion and one reason from the list; `not_applicable` and `low`
  name no module label; ...);
- quotes the issue word for word in each `quote` (a `no_flag` always quotes what shows its reason).

Judge from the prompt alone, by reading it as the model would: no other file, no labels, no key, no script.
Check a folder with `python bench/model_answers.py check FOLDER` from the repository.
"""


# ---- check -----------------------------------------------------------------------------------------------------

def issue_text_of(user: str) -> str:
    """The issue's text as the prompt shows it: between the two fence lines (normalised as quotes are checked)."""
    from triage.planners.model.answer import normal

    found = re.search(r"<<<(ISSUE-DATA-[0-9a-f]+)\n(.*)\n\1>>>", user, re.S)
    text = found.group(2) if found else user
    # The prompt's own section markers are not the issue's words (the product checks quotes against the issue).
    text = re.sub(r"^(?:TITLE: |BODY:$|COMMENT \d+:$)", "", text, flags=re.M)
    return normal(text)


def check_answer(prompt: dict, answer_text: str) -> tuple[list[str], list[str]]:
    """(problems that make the answer unusable, warnings) for one answer file against its prompt."""
    from triage.planners.model.answer import quote_found
    from triage.planners.model.checks import answer_problems
    from triage.planners.model.schema import PARTS, schema_problems

    try:
        answer = json.loads(answer_text)
    except ValueError as exc:
        return [f"not JSON ({exc})"], []
    schema = prompt["response_format"]["json_schema"]["schema"]
    problems = schema_problems(answer, schema)
    if problems:
        return problems, []
    problems = answer_problems(answer)
    text = issue_text_of(_messages(prompt)[1])
    warnings = []
    for part in PARTS.values():
        quote = answer[part]["quote"]
        if quote and not quote_found(quote, text):
            warnings.append(f"{part}: quote not found in the issue: {quote[:60]!r}")
    high = answer["high_priority"]
    if high["decision"] == "no_flag" and not quote_found(high["quote"], text):
        warnings.append("high_priority: a no_flag without a quote found in the issue cannot clear a rubric flag")
    return problems, warnings


def check(directory: Path) -> int:
    prompts, answers = index(directory, "prompt"), index(directory, "answer")
    bad = warned = 0
    for number, path in prompts.items():
        if number not in answers:
            print(f"{path.parent.name}/answer-{number}.json: missing")
            bad += 1
            continue
        problems, warnings = check_answer(json.loads(path.read_text(encoding="utf-8")),
                                          answers[number].read_text(encoding="utf-8"))
        for line in problems:
            print(f"{answers[number].relative_to(directory)}: {line}")
        for line in warnings:
            print(f"{answers[number].relative_to(directory)}: warning: {line}")
        bad += bool(problems)
        warned += bool(warnings)
    stray = sorted(set(answers) - set(prompts))
    for number in stray:
        print(f"{answers[number].relative_to(directory)}: no prompt-{number}.json for it")
    print(f"check: {len(prompts)} prompts, {len(answers)} answers, {bad} unusable or missing, "
          f"{warned} with warnings, {len(stray)} without a prompt")
    return 1 if bad or stray else 0


# ---- score -----------------------------------------------------------------------------------------------------

def _get(d: dict, *path, default=None):
    for part in path:
        if not isinstance(d, dict) or part not in d:
            return default
        d = d[part]
    return d


def _fmt(value, digits: int = 3) -> str:
    return "n/a" if value is None else f"{value:.{digits}f}"


def figures(result: dict) -> dict:
    key = _get(result, "key", "all", default={})
    model = result.get("model") or {}
    return {
        "hp_recall": _get(key, "high_priority", "recall"), "false_flags": _get(key, "high_priority",
                                                                              "false_flag_rate"),
        "right_type": _get(key, "requests", "right_type_rate"),
        "type_on_non_requests": _get(key, "non_requests", "typed_rate"),
        "routing": _get(result, "routing", "accuracy"), "module_f1": _get(result, "modules", "micro", "f1"),
        "asked": model.get("call_rate"), "calls": model.get("calls"), "fallbacks": model.get("fallbacks"),
        "input_tokens": model.get("input_tokens"), "cached_input_tokens": model.get("cached_input_tokens"),
        "output_tokens": model.get("output_tokens"),
    }


def table(rows: dict[str, dict]) -> str:
    lines = ["| planner | hp recall | false flags | right type | type on non-requests | routing | module F1 | "
             "asked | calls (fallbacks) | input tokens (cached) | output tokens |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for planner, f in rows.items():
        tokens_in = "" if f["input_tokens"] is None else f"{f['input_tokens']:,} ({f['cached_input_tokens'] or 0:,})"
        calls = "" if f["calls"] is None else f"{f['calls']} ({f['fallbacks']})"
        lines.append(f"| {planner} | {_fmt(f['hp_recall'])} | {_fmt(f['false_flags'])} | {_fmt(f['right_type'])} | "
                     f"{_fmt(f['type_on_non_requests'])} | {_fmt(f['routing'])} | {_fmt(f['module_f1'])} | "
                     f"{'' if f['asked'] is None else _fmt(f['asked'])} | {calls} | {tokens_in} | "
                     f"{'' if f['output_tokens'] is None else format(f['output_tokens'], ',')} |")
    return "\n".join(lines) + "\n"


def gated_config(config: str | None, into: Path) -> str:
    """The queue `config` names (a queue folder, a repository config file, or the bundled distributed queue) with
    `hybrid: {gate: true}` laid over its rubric, written under `into`; the prompt it renders is the same."""
    import yaml

    source = Path(config) if config else ROOT / "queues" / "distributed"
    if source.is_dir():
        folder = into / "queue"
        shutil.copytree(source, folder)
        rubric = folder / "rubric.yaml"
        data = yaml.safe_load(rubric.read_text(encoding="utf-8"))
        data.setdefault("hybrid", {})["gate"] = True
        rubric.write_text(yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=200), encoding="utf-8")
        return str(folder)
    data = yaml.safe_load(source.read_text(encoding="utf-8")) or {}
    data.setdefault("rubric", {}).setdefault("hybrid", {})["gate"] = True
    file = into / "ptd-triage.yml"
    file.write_text(yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=200), encoding="utf-8")
    return str(file)


def score(dataset: Path, key: Path, answers: Path, config: str | None, json_out: Path | None,
          hybrid_gate: bool = False) -> int:
    rows, raw = {}, {}
    runs = [(planner, planner, config) for planner in PLANNERS]
    with tempfile.TemporaryDirectory() as tmp, StandIn("serve", answers) as stand_in:
        if hybrid_gate:
            runs.append(("hybrid-gate", "hybrid", gated_config(config, Path(tmp))))
        for column, planner, queue in runs:
            stand_in.seen_systems.clear()  # each planner's run starts with a cold cache, as a run would
            args = ["eval", str(dataset), "--key", str(key), "--format", "json", "--planner", planner,
                    *(["--config", queue] if queue else [])]
            if planner != "rubric":
                args += model_options(stand_in.url)
            run = ptd_triage(args)
            if run.returncode not in (0, 1) or not run.stdout.strip():
                print(f"score: eval --planner {planner} ({column}) failed (exit {run.returncode}): "
                      f"{run.stderr[-1500:]}", file=sys.stderr)
                return 2
            raw[column] = json.loads(run.stdout)
            rows[column] = figures(raw[column])
        counts = dict(stand_in.counts)
    print(f"{dataset.name} with {key.name}, answers from {answers}\n")
    print(table(rows))
    print(f"stand-in: {counts['answered']} answered, {counts['repairs']} repair calls, {counts['missing']} "
          f"without an answer, {counts['changed']} refused because the prompt changed since capture")
    if json_out:
        json_out.write_text(json.dumps({"dataset": str(dataset), "key": str(key), "answers": str(answers),
                                        "figures": rows, "stand_in": counts}, indent=1) + "\n", encoding="utf-8")
    return 1 if counts["changed"] else 0


# ---- cost ------------------------------------------------------------------------------------------------------

def cost(prompts: Path, answers: Path, price: list[float], schema_cached: bool, share: float) -> int:
    given, read, write, out = price
    rows, outputs = [], []
    answered = index(answers, "answer")
    for number, path in index(prompts, "prompt").items():
        document = json.loads(path.read_text(encoding="utf-8"))
        system, user = _messages(document)
        rows.append((tokens(system), tokens(user), tokens(json.dumps(document.get("response_format") or {}))))
        if number in answered:
            outputs.append(tokens(answered[number].read_text(encoding="utf-8")))
    if not rows or not outputs:
        print(f"cost: no prompts in {prompts} or no answers in {answers}", file=sys.stderr)
        return 2
    n = len(rows)
    system, user, schema = (sum(r[i] for r in rows) / n for i in range(3))
    output = sum(outputs) / len(outputs)
    prefix = system + (schema if schema_cached else 0)
    cached = prefix // CACHE_BLOCK * CACHE_BLOCK
    rest = system + schema + user - cached
    calls = 100 * share
    warm = (cached * write + (calls - 1) * cached * read + calls * (rest * given + output * out)) / 1_000_000
    cold = calls * (cached * write + rest * given + output * out) / 1_000_000
    print(f"{n} prompts, {len(outputs)} answers: per call {system:,.0f} system + {schema:,.0f} schema + "
          f"{user:,.0f} user tokens in ({cached:,.0f} cached), {output:,.0f} out")
    print(f"per 100 issues, {share:.3f} of them asked: ${warm:.3f} with the cache warm, ${cold:.3f} cold")
    return 0


# ---- serve, mechanical -----------------------------------------------------------------------------------------

def serve(directory: Path, port_file: Path | None) -> int:
    with StandIn("serve", directory) as stand_in:
        if port_file:
            port_file.write_text(str(stand_in.server.server_address[1]), encoding="utf-8")
        print(f"serving answers from {directory} at {stand_in.url} (Ctrl-C to stop)", flush=True)
        try:
            threading.Event().wait()
        except KeyboardInterrupt:
            pass
    return 0


def mechanical(directory: Path, dataset: Path) -> int:
    """Answers that repeat the rubric's plan, quoting the title: for testing the harness, never a measurement."""
    from triage.config.bundle import load_bundle
    from triage.evaluation.dataset import read_dataset
    from triage.planners import plan_issue

    bundle = load_bundle()
    prompts = index(directory, "prompt")
    written = 0
    for row in read_dataset(dataset):
        path = prompts.get(str(row.snapshot.number))
        if path is None:
            continue
        plan = plan_issue(row.snapshot, bundle)
        answer = _agreeing(plan, bundle, row.snapshot.title)
        (path.parent / f"answer-{row.snapshot.number}.json").write_text(json.dumps(answer, indent=1) + "\n",
                                                                        encoding="utf-8")
        written += 1
    print(f"mechanical: {written} answers (they repeat the rubric: a harness test, not a measurement)")
    return 0


def _agreeing(plan, bundle, title: str) -> dict:
    steps = {r.step: r for r in plan.steps if not r.skipped}

    def said(n, default):
        return str(steps[n].decision) if n in steps else default

    def part(decision, **extra):
        return {"decision": decision, "reason": "as the rubric found", "quote": title[:200], **extra}

    routes = list(bundle.rubric.routes)
    out_of_queue = said(1, "distributed") == "not_distributed"
    s3 = steps.get(3)
    confident = s3 is not None and s3.decision in ("high", "medium") and not out_of_queue
    kind = said(4, "none") if said(4, "none") in ("feature", "enhancement") else "none"
    flag = said(5, "no_flag") == "flag" and not out_of_queue
    return {
        "not_distributed": part("not_distributed" if out_of_queue else "distributed"),
        "route": part(said(2, routes[0]) if said(2, routes[0]) in routes else bundle.rubric.default_route),
        "modules": part(s3.decision, labels=list(s3.labels)) if confident else part(
            "low" if s3 is not None and not out_of_queue else "not_applicable", labels=[]),
        "type": part(kind, performance=kind == "enhancement" and bundle.labels.performance in steps[4].labels),
        "high_priority": part("flag" if flag else "no_flag",
                              criteria=list(steps[5].criteria or ("crash",))[:1] if flag else [],
                              no_flag_reason="none" if flag else (
                                  "not_distributed" if out_of_queue else "no_criterion_met")),
        "reproduction": part("needs_reproduction" if said(6, "") == "needs_reproduction" and kind == "none"
                             else "has_reproduction"),
    }


def archive(prompts: Path, out: Path) -> int:
    """Copy every answer under `prompts` to `out` (flat) with the hashes of the prompts they answer."""
    answers, captured = index(prompts, "answer"), index(prompts, "prompt")
    unanswered = sorted(set(captured) - set(answers), key=int)
    orphans = sorted(set(answers) - set(captured), key=int)
    if unanswered or orphans:
        print(f"archive: {len(unanswered)} prompt(s) without an answer {unanswered[:5]}, {len(orphans)} answer(s) "
              f"without a prompt {orphans[:5]}: nothing written", file=sys.stderr)
        return 1
    out.mkdir(parents=True, exist_ok=True)
    hashes = {}
    for number in sorted(answers, key=int):
        document = json.loads(captured[number].read_text(encoding="utf-8"))
        hashes[number] = {"system_sha256": document["system_sha256"], "user_sha256": sha(_messages(document)[1])}
        shutil.copy(answers[number], out / f"answer-{number}.json")
    (out / HASHES).write_text(json.dumps(hashes, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    print(f"archive: {len(answers)} answers and their prompts' hashes in {out}")
    return 0


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="bench/model_answers.py", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("capture")
    p.add_argument("dataset", type=Path)
    p.add_argument("out", type=Path)
    p.add_argument("--config")
    p.add_argument("--per-folder", type=int, default=60)
    p = sub.add_parser("check")
    p.add_argument("directory", type=Path)
    p = sub.add_parser("score")
    p.add_argument("dataset", type=Path)
    p.add_argument("key", type=Path)
    p.add_argument("answers", type=Path)
    p.add_argument("--config")
    p.add_argument("--json", type=Path)
    p.add_argument("--hybrid-gate", action="store_true",
                   help="a fourth column: hybrid with `hybrid: {gate: true}` over the queue's rubric")
    p = sub.add_parser("serve")
    p.add_argument("directory", type=Path)
    p.add_argument("--port-file", type=Path)
    p = sub.add_parser("cost")
    p.add_argument("prompts", type=Path)
    p.add_argument("answers", type=Path)
    p.add_argument("--price", type=float, nargs=4, metavar=("IN", "READ", "WRITE", "OUT"), required=True)
    p.add_argument("--schema-cached", action="store_true")
    p.add_argument("--share", type=float, default=1.0)
    p = sub.add_parser("mechanical")
    p.add_argument("directory", type=Path)
    p.add_argument("dataset", type=Path)
    p = sub.add_parser("archive")
    p.add_argument("prompts", type=Path)
    p.add_argument("out", type=Path)
    args = parser.parse_args(argv)
    if args.command == "capture":
        return capture(args.dataset, args.out, args.config, args.per_folder)
    if args.command == "check":
        return check(args.directory)
    if args.command == "score":
        return score(args.dataset, args.key, args.answers, args.config, args.json, args.hybrid_gate)
    if args.command == "serve":
        return serve(args.directory, args.port_file)
    if args.command == "cost":
        return cost(args.prompts, args.answers, args.price, args.schema_cached, args.share)
    if args.command == "archive":
        return archive(args.prompts, args.out)
    return mechanical(args.directory, args.dataset)


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
