"""What the rubric could not read is said, and the decision is conservative (issue 38).

The rubric reads English prose and the language-neutral parts of an issue (code, logs, tracebacks, error lines).
An issue whose account is in a script it does not read, that is nothing but a log, that is a bot's template, or
whose description is one line gets a reason naming what was not read (`Analysis.unread`, quoted by steps 4 and 5),
and, when step 5 flags nothing, the review label with the marker: a person reads it ("when in doubt, add triage
review for human attention"). Every issue here is written for the test.
"""

from __future__ import annotations

import pytest
from engine_helpers import MARKER, REVIEW, bundle, fenced, plan_for, snap

from triage.core.steps import analyse
from triage.reading.unread import foreign_script, unread_reasons

NCCL_LOG = fenced("""
[rank3]:[E1201 10:02:11.123 ProcessGroupNCCL.cpp:616] [Rank 3] Watchdog caught collective operation timeout:
WorkNCCL(SeqNum=4211, OpType=ALLREDUCE, NumelIn=1048576, Timeout(ms)=600000) ran for 600045 milliseconds
torch.distributed.DistBackendError: NCCL communicator was aborted on rank 3.
""", "text")

CHINESE = ("两台机器训练时 all_reduce 卡住",
           "我们在两台机器上用 FSDP 训练，每台八张卡。训练大约两个小时以后，所有进程都卡在同一个 all_reduce，"
           "十分钟后看门狗超时退出。单机训练没有这个问题。日志如下：\n\n" + NCCL_LOG)
JAPANESE = ("2ノードでFSDPの学習が止まる",
            "2台のノードでFSDPを使って学習すると、数時間後にすべてのランクがall_reduceで止まってしまいます。"
            "1台だけなら問題ありません。ログは以下の通りです。\n\n" + NCCL_LOG)
KOREAN = ("두 노드에서 학습이 멈춥니다",
          "두 대의 노드에서 FSDP로 학습하면 몇 시간 뒤에 모든 랭크가 all_reduce에서 멈춥니다. 한 대에서는 문제가 "
          "없습니다. 로그는 아래와 같습니다.\n\n" + NCCL_LOG)
RUSSIAN = ("Зависание all_reduce на двух узлах",
           "При обучении на двух узлах через несколько часов все процессы зависают в all_reduce, а на одном узле "
           "всё работает. Лог ниже.\n\n" + NCCL_LOG)


def _unread(title: str, body: str, **kw) -> tuple[str, ...]:
    b = bundle()
    return analyse(snap(title, body, **kw), b.rubric, b.templates.names).unread


@pytest.mark.parametrize("issue, script", [(CHINESE, "Chinese"), (JAPANESE, "Japanese"), (KOREAN, "Korean"),
                                           (RUSSIAN, "Cyrillic")], ids=["zh", "ja", "ko", "ru"])
def test_prose_in_a_script_the_rubric_does_not_read_is_said(issue, script):
    unread = _unread(*issue)
    assert any(f"prose mostly in {script}" in why for why in unread), unread
    plan = plan_for(*issue)
    reasons = " ".join(plan.reasons)
    assert f"prose mostly in {script}" in reasons and "could not read" in reasons
    assert REVIEW in plan.add_labels  # flagged on the log it could read, or sent to review: never a silent "no"


def test_a_hang_explained_in_chinese_is_not_left_unflagged_without_a_word():
    plan = plan_for(*CHINESE)
    step5 = plan.step(5)
    assert "Chinese" in step5.reason
    if step5.decision != "flag":
        assert REVIEW in plan.add_labels and MARKER in plan.add_labels
        assert "for a person to read it" in step5.reason


def test_english_with_a_name_in_another_script_is_read():
    body = ("FSDP hangs in the first all_gather on two nodes after upgrading to 2.5; our cluster is called 天河 "
            "and runs 16 GPUs per node.\n\n" + NCCL_LOG)
    assert not any("prose mostly" in why for why in _unread("FSDP hangs on two nodes", body))


def test_a_log_with_no_words_around_it_is_said():
    log = fenced("""
Traceback (most recent call last):
  File "train.py", line 88, in <module>
    model = FSDP(model, device_id=rank)
  File "/opt/torch/distributed/fsdp/fully_sharded_data_parallel.py", line 463, in __init__
    _init_param_handle_from_module(self)
RuntimeError: CUDA error: an illegal memory access was encountered
""")
    unread = _unread("FSDP init error", log)
    assert any("nothing but a pasted log" in why for why in unread), unread
    assert "nothing but a pasted log" in " ".join(plan_for("FSDP init error", log).reasons)


def test_log_lines_pasted_outside_a_code_block_are_not_prose():
    body = "\n".join(f"[rank{r}]:[W1201 10:0{r}:11 ProcessGroupNCCL.cpp:1234] Warning: heartbeat missed"
                     for r in range(6))
    assert any("nothing but a pasted log" in why for why in _unread("NCCL warnings", body))


def test_a_bots_ci_template_report_is_said():
    body = ("Platforms: linux\n\nThis test was disabled because it is failing in CI. See recent examples and the "
            "most recent trunk workflow logs.\n\nOver the past 3 hours, it has been determined flaky in 4 workflow(s) "
            "with 8 failures and 4 successes.\n\n**Debugging instructions (after clicking on the recent samples "
            "link):**\nDO NOT ASSUME THINGS ARE OKAY IF THE CI IS GREEN.")
    title = "DISABLED test_fsdp_overlap_prefetch (__main__.TestOverlap)"
    unread = _unread(title, body, login="ci-helper[bot]")
    assert any("bot's or CI template" in why for why in unread), unread
    plan = plan_for(title, body, login="ci-helper[bot]")
    assert "bot's or CI template" in " ".join(plan.reasons)
    assert REVIEW in plan.add_labels and MARKER in plan.add_labels


def test_an_apps_login_alone_marks_a_bot_report():
    assert any("bot's" in why for why in _unread("Nightly distributed job failed", "See the run for details.",
                                                 login="nightly-reporter[bot]"))


def test_a_one_line_description_is_said():
    unread = _unread("DDP broken", "doesn't work anymore, see title")
    assert any("one short line" in why for why in unread), unread


def test_a_plain_english_report_is_read_in_full():
    body = ("With two nodes of eight GPUs, DDP training hangs in the first backward: every rank waits in "
            "all_reduce and the watchdog kills the job after ten minutes. It worked on 2.4.\n\n"
            + fenced("import torch\nimport torch.distributed as dist\ndist.init_process_group('nccl')"))
    assert _unread("DDP hangs on two nodes since 2.5", body) == ()
    plan = plan_for("DDP hangs on two nodes since 2.5", body)
    assert "could not read" not in " ".join(plan.reasons)


def test_the_script_count_leaves_out_code_and_links():
    from triage.text.document import Document

    doc = Document.of({"prose": "see `日本語のテストです日本語のテストです` and https://example.com/日本語のテストです "
                                "for the failing config, which hangs on two nodes"})
    assert foreign_script(doc) is None


def test_hostile_text_in_every_script_is_bounded_work():
    body = ("中" * 20000 + "あ" * 20000 + "한" * 20000 + "Ж" * 4000)[:65536]
    doc = analyse(snap("x", body), bundle().rubric).doc
    assert unread_reasons(doc)  # read, and said: a hang guard is the test suite's, timings are bench/redos.py's
