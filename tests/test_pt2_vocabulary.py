"""The pt2 queue's vocabulary, by what is true of the queue (issue 19 item 5), not by record:
- Inductor is torch.compile's default backend: a compiled function that gives wrong results or runs slowly, with no
  other component named, is Inductor's; so is a failure Dynamo reports as "backend='inductor' raised".
- Dynamo is not read from the queue's own `[torch.compile]` title tag, nor from `torch._dynamo` in a traceback or a
  script (every compile passes through it; repro scripts set its config whatever the bug); Dynamo named as the
  subject, or its own settings in the title, still count.
- AOTAutograd has its own vocabulary (aot_function/aot_module, the joint graph, the partitioner and what it saves or
  rematerializes, torch/_functorch/_aot_autograd/), for `module: aotdispatch` and `module: pt2-dispatcher`.
- A user's own Triton kernel is wrapped and launched by Inductor: `module: user triton` comes with Inductor's.
- Dynamo runs `__torch_function__`, speculates a custom `autograd.Function`, and traces a tensor subclass first; the
  `__torch_dispatch__` side (FakeTensor, dispatch modes) stays the dispatcher's.
- On the CPU route, the CPU named beside Inductor (the route's own evidence) is `module: cpu inductor`.
- Inductor generates each device's code: a device backend named (MPS, XPU, ROCm), a "compile error" of the generated
  code, and CUDA graph trees (its reduce-overhead mode and `cudagraph_*` settings) are Inductor's.
- Decompositions (torch._decomp, torch._refs) are the dispatcher's; a matrix factorisation called a decomposition is not.
- Each component's own machinery, as its maintainers name it: Dynamo's VariableTracker names in its errors (not the
  TORCHDYNAMO_VERBOSE hint every compile error prints), Inductor's lowering error and launch knobs, custom ops and
  meta kernels for the dispatcher, size checks and inputs of varying sizes for dynamic shapes, invoke_subgraph, score_mod; `functorch.compile`
  is AOTAutograd's import path, not the functorch transforms. Boilerplate every compile error prints (the
  `TORCH_LOGS="+dynamo"` hint) and "torch.compile error" (any error of the stack) name no component.
- The backend a repro compiles with bisects the stack: `backend="eager"` fails in Dynamo, and neither it nor
  `backend="aot_eager"` runs Inductor.
- Graph breaks and guards as their own modules only when their machinery is named (kept weak).
- Routing: a compiled script that puts its tensors on the CPU runs the CPU backend's C++; `export(...)` called bare
  is torch.export.

Every issue here is invented for the case it pins, in our own words (none is copied from an eval set).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from triage.config.bundle import load_bundle
from triage.core.snapshot import snapshot_from_json
from triage.planners import plan_issue

PT2 = Path(__file__).resolve().parents[1] / "queues" / "pt2"
DYNAMO, INDUCTOR = "module: dynamo", "module: inductor"
AOTD, DISPATCHER = "module: aotdispatch", "module: pt2-dispatcher"
EXPORT, CPU = "oncall: export", "oncall: cpu inductor"
USER_TRITON, CPU_MODULE = "module: user triton", "module: cpu inductor"
CUDA_GRAPHS, GUARDS, GRAPH_BREAKS = "module: cuda graphs", "module: guards", "module: graph breaks"
FUNCTORCH, DYNAMIC, HOP = "module: functorch", "module: dynamic shapes", "module: higher order operators"
FLEX, COMPILED_AUTOGRAD = "module: flex attention", "module: compiled autograd"
BUG = "### 🐛 Describe the bug\n\n"


@pytest.fixture(scope="module")
def bundle():
    return load_bundle(queue=PT2)


def plan(bundle, title: str, body: str):
    issue = {"number": 7, "title": title, "body": body, "state": "open", "labels": [{"name": "oncall: pt2"}],
             "user": {"login": "reporter", "type": "User"}, "comments": 0}
    return plan_issue(snapshot_from_json(issue), bundle)


TRACEBACK_THROUGH_DYNAMO = (
    "```\nTraceback (most recent call last):\n"
    '  File "/usr/lib/python3.11/site-packages/torch/_dynamo/eval_frame.py", line 655, in _fn\n'
    '  File "/usr/lib/python3.11/site-packages/torch/_dynamo/convert_frame.py", line 1200, in __call__\n'
    '  File "/usr/lib/python3.11/site-packages/torch/_inductor/compile_fx.py", line 1500, in compile_fx\n'
    "torch._dynamo.exc.BackendCompilerFailed: backend='inductor' raised:\n"
    "LoweringException: AssertionError: unexpected stride\n```\n"
)

# name -> (title, body, labels that must be added, labels that must not)
CASES = {
    "compiled-wrong-results-is-inductor": (
        "torch.compile gives different values than eager for a cumulative max",
        BUG + "```python\nimport torch\nf = torch.compile(lambda x: torch.cummax(x, 0).values)\n"
        "print(f(torch.randn(64, 3, device='cuda')))\n```\nThe compiled output differs in a handful of rows.",
        (INDUCTOR,), (DYNAMO,)),
    "compiled-slow-is-inductor": (
        "Compiled model is 3x slower than eager for grouped convolutions",
        BUG + "After torch.compile the step time goes from 40 ms to 120 ms on an A100.",
        (INDUCTOR,), (DYNAMO,)),
    "title-tag-and-dynamo-frames-are-not-dynamo": (
        "[torch.compile] lowering fails for a strided view of a complex tensor",
        BUG + TRACEBACK_THROUGH_DYNAMO,
        (INDUCTOR,), (DYNAMO,)),
    "dynamo-config-in-a-script-is-not-dynamo": (
        "Compiled attention block returns NaN in the backward with bf16",
        BUG + "```python\nimport torch\nimport torch._dynamo\ntorch._dynamo.config.suppress_errors = False\n"
        "torch._dynamo.reset()\nout = torch.compile(block)(q, k, v)\nout.sum().backward()\n```\n"
        "The gradient of q comes back as NaN; eager is fine.",
        (INDUCTOR,), (DYNAMO,)),
    "dynamo-named-as-subject-still-counts": (
        "[dynamo] graph break on a generator expression inside a compiled function",
        BUG + "Dynamo breaks the graph at the generator and recompiles on every call.",
        (DYNAMO,), ()),
    "dynamo-config-in-title-counts": (
        "torch._dynamo.config.recompile_limit is too low for models with many buckets",
        "Each bucket size triggers a recompile and we hit the limit after eight shapes.",
        (DYNAMO,), ()),
    "aot-function-is-aotautograd": (
        "aot_function drops the second output's requires_grad",
        BUG + "```python\nfrom functorch.compile import aot_function\ng = aot_function(f, fw_compiler=nop, bw_compiler=nop)\n"
        "```\nThe partitioner marks the second output as not needing a gradient.",
        (AOTD,), ()),
    "partitioner-saved-activations-are-aotdispatch": (
        "Backward recomputes a large matmul despite activation_memory_budget=1.0",
        BUG + "The saved activations in the joint trace omit the matmul output, so it is rematerialized; "
        "setting torch._functorch.config.activation_memory_budget does not change it.",
        (AOTD,), ()),
    "checkpointing-in-eager-is-not-aotdispatch": (
        "Compiled model with torch.utils.checkpoint uses more memory than eager",
        BUG + "```python\nout = checkpoint(block, x, use_reentrant=False)\n```\nPeak memory doubles once compiled.",
        (), (AOTD,)),
    "aot-autograd-path-is-dispatcher": (
        "Input mutation metadata is wrong for a view of a buffer",
        BUG + "```\n  File \"torch/_functorch/_aot_autograd/collect_metadata_analysis.py\", line 210, in inner\n"
        "AssertionError: ViewAndMutationMeta mismatch\n```",
        (AOTD, DISPATCHER), ()),
    "user-triton-kernel-is-inductor-too": (
        "Compiled step calling our own @triton.jit kernel reads stale data on the second call",
        BUG + "```python\nimport triton\n@triton.jit\ndef scale_kernel(x_ptr, n, BLOCK: tl.constexpr):\n    ...\n"
        "@torch.compile\ndef step(x):\n    scale_kernel[grid](x, x.numel(), BLOCK=256)\n    return x * 2\n```",
        (USER_TRITON, INDUCTOR), ()),
    "generated-triton-kernel-is-not-user-triton": (
        "[inductor] the Triton kernel generated for a softmax spills registers on H100",
        BUG + "TORCH_LOGS=output_code shows one persistent reduction with 512 threads.",
        (INDUCTOR,), (USER_TRITON,)),
    "torch-function-subclass-is-dynamo": (
        "Compiling a function on a tensor subclass that overrides __torch_function__ drops the override",
        BUG + "```python\nclass Tagged(torch.Tensor):\n    @classmethod\n"
        "    def __torch_function__(cls, func, types, args=(), kwargs=None):\n        ...\n```",
        (DYNAMO,), ()),
    "custom-autograd-function-is-dynamo": (
        "Custom torch.autograd.Function with ctx.mark_non_differentiable errors under torch.compile",
        BUG + "```python\nclass Clip(torch.autograd.Function):\n    @staticmethod\n    def forward(ctx, x):\n"
        "        ctx.mark_non_differentiable(x)\n        return x.clamp(0, 1)\n```",
        (DYNAMO,), ()),
    "dispatch-mode-fake-tensor-is-not-dynamo": (
        "FakeTensor propagation under a __torch_dispatch__ logging mode loses the output strides",
        BUG + "The mode records every aten call; with fake tensors the recorded outputs are all contiguous.",
        (DISPATCHER,), (DYNAMO,)),
    "cpu-named-beside-inductor-is-cpu-inductor": (
        "[inductor][cpu] vectorized sum over the last dim gives wrong totals on x86",
        BUG + "```python\nx = torch.randn(4, 1000)\nprint(torch.compile(lambda t: t.sum(-1))(x) - x.sum(-1))\n```",
        (INDUCTOR, CPU_MODULE), ()),
    "a-cpu-beside-inductor-is-cpu-inductor": (
        "Inductor output for a bf16 matmul on a Xeon is off by one ulp in every row",
        BUG + "```python\nout = torch.compile(lambda a, b: a @ b)(x.bfloat16(), y.bfloat16())\n```",
        (INDUCTOR, CPU_MODULE), ()),
    "cpp-compile-error-is-cpu-inductor": (
        "Compiled bucketize over int8 boundaries does not build",
        BUG + "```\ntorch._inductor.exc.InductorError: CppCompileError: C++ compile error\n"
        "error: no matching function for call to 'VecMask<float, 1>::from'\n```",
        (CPU_MODULE,), ()),
    "cpp-compile-error-alone-names-both": (
        "Compiled int4 unpack stops building after the nightly update",
        BUG + "```\ntorch._inductor.exc.InductorError: CppCompileError: C++ compile error\n```",
        (INDUCTOR, CPU_MODULE), ()),
    "gpu-inductor-issue-is-not-cpu-inductor": (
        "[inductor] CUDA kernel for a strided gather is slow",
        BUG + "Copying the output back to cpu shows the compiled gather takes 3 ms where eager takes 1 ms.",
        (INDUCTOR,), (CPU_MODULE,)),
    "device-backend-is-inductor": (
        "[MPS] compiled layer norm aborts on Apple silicon",
        BUG + "```python\nm = torch.nn.LayerNorm(64).to('mps')\nout = torch.compile(m)(torch.randn(8, 64, device='mps'))\n```",
        (INDUCTOR,), (DYNAMO,)),
    "build-error-of-generated-code-is-inductor": (
        "Compiling a bitwise rotate on uint32 fails with a compile error",
        BUG + "The generated kernel does not build: `triton.compiler.errors.CompilationError: at 12:8`.",
        (INDUCTOR,), (DYNAMO,)),
    "torch-compile-error-is-not-a-build-error": (
        "torch.compile error when a module registers a forward pre-hook",
        BUG + "```\ntorch._dynamo.exc.Unsupported: hook with kwargs\n```",
        (DYNAMO,), (INDUCTOR,)),
    "dynamo-log-hint-is-not-dynamo": (
        "Compiled call of a library op raises with no fake implementation",
        BUG + "```\nUnsupportedOperatorException: mylib.scale.default\n"
        "You can suppress this exception and fall back to eager by setting torch._dynamo.config.suppress_errors. "
        "For even more developer context, set TORCH_LOGS=\"+dynamo\"\n```",
        (DISPATCHER,), (DYNAMO,)),
    "eager-backend-repro-is-dynamo": (
        "Compiled method keeps returning a stale attribute after the module is mutated",
        BUG + "```python\nm = Net()\nf = torch.compile(m.forward, backend=\"eager\")\nf(x)\nm.scale = 3.0\n"
        "print(f(x))  # still uses the old scale\n```",
        (DYNAMO,), (INDUCTOR,)),
    "aot-eager-repro-is-not-inductor": (
        "Compiled model gives wrong gradients for a view that is later mutated",
        BUG + "```python\nopt = torch.compile(model, backend='aot_eager')\nopt(x).sum().backward()\n```",
        (DISPATCHER,), (INDUCTOR,)),
    "dynamo-error-while-compiling-is-not-inductor": (
        "torch.compile raises Unsupported on a generator passed to zip",
        BUG + "```\ntorch._dynamo.exc.Unsupported: generator with send\n```",
        (DYNAMO,), (INDUCTOR,)),
    "cudagraph-trees-are-inductor": (
        "reduce-overhead mode re-records the graph whenever the batch size changes",
        BUG + "With `torch.compile(model, mode=\"reduce-overhead\")` every new batch size records a new graph "
        "until memory runs out; `cudagraph_skip_dynamic_graphs` does not help.",
        (CUDA_GRAPHS, INDUCTOR), ()),
    "decomposition-is-dispatcher": (
        "The decomposition of upsample_nearest2d rounds source indices differently from the eager kernel",
        BUG + "torch._decomp's reference computes the scale in float32 while eager uses float64, so the compiled "
        "result picks a different neighbour for some sizes.",
        (DISPATCHER,), ()),
    "matrix-decomposition-is-not-dispatcher": (
        "Singular value decomposition is slow under torch.compile",
        BUG + "```python\nf = torch.compile(lambda a: torch.linalg.svd(a))\n```\nThe QR decomposition path is slow too.",
        (), (DISPATCHER,)),
    "guard-manager-is-guards": (
        "Guard evaluation overhead grows with the number of parameters",
        BUG + "With TORCH_LOGS=guards the GuardManager tree has one node per parameter and each call takes 2 ms.",
        (GUARDS,), ()),
    "graph-break-reporting-is-graph-breaks": (
        "torch._dynamo.explain counts the same graph break twice for a nested function",
        "The break_reasons list has two entries with the same gb_type and user stack.",
        (GRAPH_BREAKS,), ()),
    # PyTorch gives most graph breaks `module: dynamo` alone: a break on a construct is Dynamo's.
    "graph-break-on-a-construct-is-dynamo": (
        "[dynamo] graph break on a dict comprehension over module buffers",
        BUG + "```python\n@torch.compile(fullgraph=True)\ndef f(m):\n    return {k: v * 2 for k, v in m.named_buffers()}\n```",
        (DYNAMO,), (GRAPH_BREAKS,)),
    "dynamo-variable-in-its-error-is-dynamo": (
        "Calling a classmethod through super() fails inside a compiled forward",
        BUG + "```\nAssertionError: expected a ConstantVariable() for the class, got GetAttrVariable()\n```",
        (DYNAMO,), ()),
    "dynamo-verbose-hint-is-not-dynamo": (
        "Compiled depthwise conv produces a LoweringException for channels_last input",
        BUG + "```\ntorch._dynamo.exc.BackendCompilerFailed: backend='inductor' raised:\n"
        "LoweringException: AssertionError: expected contiguous layout\n\n"
        "Set TORCHDYNAMO_VERBOSE=1 for the internal stack trace (please do this especially if you're reporting a bug "
        "to PyTorch). For even more developer context, set TORCH_LOGS=\"+dynamo\"\n```",
        (INDUCTOR,), (DYNAMO,)),
    "inductor-launch-knobs-are-inductor": (
        "Reduction over a long row picks num_warps=32 and runs slower than eager",
        "The persistent reduction spills registers; TORCHINDUCTOR_COORDINATE_DESCENT_TUNING=1 brings it back.",
        (INDUCTOR,), ()),
    "custom-op-is-dispatcher": (
        "A custom_op with mutates_args loses the in-place update under torch.compile",
        BUG + "```python\n@torch.library.custom_op('mylib::fill_', mutates_args={'out'})\ndef fill_(out, v): ...\n"
        "@fill_.register_fake\ndef _(out, v): return None\n```",
        (DISPATCHER,), ()),
    "functorch-compile-import-is-not-functorch": (
        "functorch.compile's min-cut partitioner saves every activation with a custom bw_compiler",
        BUG + "```python\nfrom functorch.compile import aot_module, min_cut_rematerialization_partition\n"
        "m = aot_module(net, fw_compiler=fw, bw_compiler=bw, partition_fn=min_cut_rematerialization_partition)\n```",
        (AOTD,), (FUNCTORCH,)),
    "functorch-transform-is-functorch": (
        "functorch.vmap over a compiled function returns the unbatched result",
        BUG + "```python\nfrom functorch import vmap\nout = vmap(torch.compile(f))(x)\n```",
        (FUNCTORCH,), ()),
    "size-checks-are-dynamic-shapes": (
        "torch._check_is_size on an item() result still recompiles for every value",
        BUG + "```python\nn = x.sum().item()\ntorch._check_is_size(n)\nreturn torch.zeros(n)\n```",
        (DYNAMIC,), ()),
    "recompiling-for-each-size-is-dynamic-shapes": (
        "Decoder recompiles for every new sequence length during generation",
        "Our prompts have variable-length inputs; after eight lengths the recompile limit is hit and it falls back.",
        (DYNAMIC,), ()),
    "recompiling-for-a-changed-attribute-is-not-dynamic-shapes": (
        "Decoder recompiles every time a Python flag on the module is toggled",
        "Flipping `self.training_mode` between calls triggers a recompile each time.",
        (DYNAMO,), (DYNAMIC,)),
    "invoke-subgraph-is-hop": (
        "invoke_subgraph reuses one compiled region for two layers with different dtypes",
        BUG + "Marking the block with nested_compile_region makes both layers run the bf16 subgraph.",
        (HOP,), ()),
    "score-mod-is-flex-attention": (
        "A score_mod that reads a captured bias tensor returns zeros in the backward",
        BUG + "```python\ndef bias_mod(score, b, h, q, k):\n    return score + bias[h, q, k]\n```",
        (FLEX,), ()),
    "enable-compiled-autograd-is-compiled-autograd": (
        "Backward hooks run twice when the backward is compiled",
        BUG + "```python\ntorch._dynamo.config.enable_compiled_autograd = True\nloss.backward()\n```",
        (COMPILED_AUTOGRAD,), ()),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_pt2_modules_follow_what_is_true_of_the_queue(bundle, case):
    title, body, must, must_not = CASES[case]
    p = plan(bundle, title, body)
    for label in must:
        assert label in p.add_labels, p.step(3).reason
    for label in must_not:
        assert label not in p.add_labels, p.step(3).reason


def test_a_compiled_script_on_the_cpu_goes_to_cpu_inductor(bundle):
    p = plan(bundle, "Compiled MLP is much slower than eager",
             BUG + "```python\nimport torch\nmodel = MLP().to('cpu')\nfast = torch.compile(model)\n```")
    assert p.sub_oncall == CPU, p.step(2).reason


def test_a_bare_export_call_goes_to_export(bundle):
    p = plan(bundle, "Tracing a module with a namedtuple attribute fails",
             BUG + "```python\nfrom torch.export import export\nep = export(Net(), (x,))\n```")
    assert p.sub_oncall == EXPORT, p.step(2).reason


def test_onnx_export_is_not_torch_export(bundle):
    p = plan(bundle, "Compiled model cannot be saved",
             BUG + "```python\nimport torch\ntorch.onnx.export(torch.compile(m), (x,), 'm.onnx')\n```")
    assert p.sub_oncall != EXPORT, p.step(2).reason


def test_the_cpu_module_follows_the_cpu_route_only(bundle):
    gpu = plan(bundle, "[inductor] CUDA kernel for a strided gather is slow",
               BUG + "Copying the output back to cpu shows the compiled gather takes 3 ms where eager takes 1 ms.")
    assert gpu.sub_oncall != CPU, gpu.step(2).reason
    cpu = plan(bundle, "[inductor] vectorized sum over the last dim gives wrong totals on an x86 CPU", BUG)
    assert cpu.sub_oncall == CPU, cpu.step(2).reason
