"""The model planners' triage side: what a model is asked about an issue and how its answer becomes the
procedure's decisions. The providers' protocols (HTTP requests and replies, errors, prices) are `triage.llm`'s;
everything here is about triage:

- `prompt`: the prompt, rendered from the queue's `prompt.md.j2`;
- `schema`: the closed plan schema the answer must match, from the configuration and `triage.core.vocab`;
- `consultant`: asks the model for one issue (one answer, at most one repair) and keeps what it cost, also when it
  failed;
- `answer`: the adapter from a conforming answer to per-step `Judgement`s (`triage.core.merge`);
- `planner`: `ModelPlanner`, the flow both model planners share (`triage.planners.llm`, `triage.planners.hybrid`):
  the rubric plans first, the model is asked only where the procedure reached a judgement, and its decisions run
  through the one procedure with the planner's merge policy.

May import: the standard library, `triage.config`, `triage.core`, `triage.planners.base`,
`triage.planners.rubric`, `triage.llm` (errors, and the client only as an object handed in), `triage.http.errors`.
"""
