"""build_document: which location each passage of an issue lands in (signals weigh them differently)."""

from __future__ import annotations

from triage.text.document import build_document
from triage.text.matching import compile_pattern

ENV = compile_pattern(r"(?i)\b(versions?|environment)\b")
SEP = compile_pattern(r"^\S+ · comment · \d{4}-\d{2}-\d{2}\s*$")

BODY = """\
Wrapping the model with FSDP breaks.

```python
import torch
model = FSDP(net)
```

```
Traceback (most recent call last):
  File "/opt/torch/distributed/fsdp/fully_sharded_data_parallel.py", line 12, in forward
RuntimeError: flat_param has the wrong size
```

<!-- ptd-triage:not_distributed hidden instruction -->

### Versions

PyTorch version: 2.5.0
NCCL version 2.21
"""


def doc(body=BODY, comments=(), title="FSDP wrap breaks"):
    return build_document(title, body, list(comments), environment_heading=ENV, comment_separator=SEP)


def test_each_passage_lands_in_its_location():
    d = doc()
    assert d.get("title") == "FSDP wrap breaks"
    assert "Wrapping the model with FSDP breaks." in d.get("prose")
    assert "model = FSDP(net)" in d.get("code")
    assert "torch/distributed/fsdp/fully_sharded_data_parallel.py" in d.get("frame")
    assert "RuntimeError: flat_param has the wrong size" in d.get("error")
    assert "NCCL version 2.21" in d.get("environment")
    # the environment dump says nothing about the bug: it must not leak into prose
    assert "NCCL" not in d.get("prose") and "NCCL" not in d.get("code")
    assert d.get("code").startswith("import torch")


def test_html_comments_are_dropped_so_hidden_text_is_no_evidence():
    d = doc()
    assert all("ptd-triage" not in d.get(loc) for loc in ("prose", "code", "comment", "error"))


def test_collect_env_output_is_environment_even_without_a_heading():
    d = doc("It hangs.\n\n```\nCollecting environment information...\nPyTorch version: 2.4\nIs debug build: False\n```\n")
    assert "PyTorch version: 2.4" in d.get("environment")
    assert d.get("code") == ""


def test_comments_become_comment_location_including_their_code():
    d = doc("short", comments=["Same here with DDP.\n\n```python\nmodel = DDP(m)\n```"])
    assert "Same here with DDP." in d.get("comment")
    assert "model = DDP(m)" in d.get("comment")
    assert "DDP" not in d.get("prose") and d.get("code") == ""


def test_comment_separator_turns_inlined_excerpts_into_comments():
    d = doc("The bug text.\nbob · comment · 2024-05-01\nI see it with DTensor too.")
    assert "The bug text." in d.get("prose")
    assert "I see it with DTensor too." in d.get("comment")
    assert "DTensor" not in d.get("prose")


def test_unclosed_fence_is_still_code():
    d = doc("Repro:\n```python\nimport torch\ndist.init_process_group('nccl')")
    assert "init_process_group" in d.get("code")
    assert d.get("code") == "import torch\ndist.init_process_group('nccl')"


def test_cpp_frames_and_rank_prefixed_errors():
    d = doc("```\n[rank0]: frame #3: c10d::ProcessGroupNCCL::watchdog()\n[rank1]: torch.distributed.DistBackendError: NCCL error\n```")
    assert "ProcessGroupNCCL::watchdog" in d.get("frame")
    assert "DistBackendError" in d.get("error")


# ---- the markdown scanner's rules, as the located text sees them ---------------------------------------------------


def test_inline_code_in_backticks_does_not_open_a_fence():
    # GitHub renders the first line as inline code; the script after it is the code block (was: prose).
    d = doc("```repro.py``` is defined as follows\n```\nmodel = FSDP(net)\n```\nThanks.")
    assert d.get("code") == "model = FSDP(net)"
    assert "```repro.py``` is defined as follows" in d.get("prose") and "Thanks." in d.get("prose")


def test_a_fence_closes_only_on_a_matching_fence():
    d = doc("````\n```python\nmodel = DDP(m)\n```\n````\nafter")
    assert d.get("code") == "```python\nmodel = DDP(m)\n```"
    assert "after" in d.get("prose")


def test_an_unclosed_fence_after_a_comment_separator_is_comment_text():
    d = doc("Bug.\nbob · comment · 2024-05-01\nRepro:\n```\nmodel = DDP(m)")
    assert "model = DDP(m)" in d.get("comment")
    assert d.get("code") == ""


def test_an_html_comment_left_open_at_a_line_start_hides_the_rest():
    d = doc("Visible FSDP text.\n<!-- a template's instructions, never closed\nDTensor hidden")
    assert "Visible FSDP text." in d.get("prose")
    assert all("DTensor" not in d.get(loc) for loc in ("prose", "code", "comment", "error"))


def test_text_that_bypassed_the_snapshot_still_matches():
    # a lone surrogate: RE2 reads UTF-8, and this text cannot be encoded as it is
    d = doc("FSDP \ud800 hangs\nRuntimeError: bad \ud800\n```\nFile \"x\ud800.py\", line 3\n```")
    assert d.encoded("prose") == "FSDP ? hangs".encode()
    assert d.get("error") == "RuntimeError: bad \ud800" and d.get("frame") == 'File "x\ud800.py", line 3'
