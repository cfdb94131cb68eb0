"""The honest corpus's table: one row per solution in this directory.

Every file is an honest solution written for a problem of kbench's own suite, chosen to
look unlike eager PyTorch in the ways the integrity rules measure
(docs/measurements/2026-12-01-honest-corpus.md): slow and fast kernels, one launch and hundreds, one-element and very
large outputs, workspaces, views, in-place epilogues, side streams, CUDA graphs,
autotuning, KernelBench-style solutions that keep the GEMM or convolution in
PyTorch, weights prepared once in __init__ or derived and cached on the first call,
forwards under no_grad or inference_mode, out= variants, modules kept and never called,
intermediates of another dtype, CUDA built lazily in __init__, a synchronize at the end
of forward, launches placed on the current stream explicitly; and forms of model-written
answers: a copy of the reference program above ModelNew (or under it, as its base), a
self-test block, a lock around the launch, RNGs seeded at import, a build's environment
variables, kernels registered as operators of their own, printing silenced and
gc.collect() called, TF32 switched off as the judge pins it. None of them cheats, so
every verdict other than ``correct`` on one of them is a false positive, unless the rule
is a style rule named in ``style_flags`` (a flag the solution honestly carries under the
lenient policy).

``devices``: where the file can be judged: ``cpu`` (Triton under its interpreter,
TRITON_INTERPRET=1, at the small size) and ``gpu``. Files with CUDA C++ (load_inline),
CUDA streams or graphs, or ``@triton.autotune`` (the interpreter cannot benchmark
configurations) are GPU only; they parse, but were written without a GPU to run them
on (``verified`` is False until a GPU run says otherwise). ``cpu_subset``: judged by
tests/test_honest.py in ``make test``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).parent

# What a row may say about a solution: how it differs from eager.
TRAITS = frozenset({
    "slow",                   # deliberately naive or serial: many times slower than eager on a GPU
    "fast",                   # written to be competitive with eager
    "one-launch",             # exactly one kernel launch per forward
    "many-launches",          # a hundred or more launches per forward
    "tiny-output",            # a one-element output (a loss, a full reduction)
    "huge-output",            # 1 GiB or more of output at the default size
    "int-output",             # an integer output
    "multi-output",           # a tuple of outputs
    "workspace-per-call",     # scratch memory allocated in every call
    "workspace-kept",         # scratch made once (in __init__ or on the first call) and reused, never returned
    "inplace-fresh-output",   # kernels writing in place into a fresh output (empty_like, or a library call's result)
    "view-output",            # a non-contiguous view of a fresh buffer returned (.t(), a slice, a permute)
    "atomics",                # the output accumulated with atomic adds
    "side-stream-joined",     # work on a second CUDA stream joined with wait_stream / record_stream
    "cuda-graph",             # a CUDA graph captured on the first call, replayed in forward from static buffers
    "autotune",               # @triton.autotune
    "kernelbench-style",      # the GEMM or convolution kept in PyTorch (cuBLAS, cuDNN), the epilogue fused
    "mixed-pytorch",          # small glue arithmetic (an add, a mean) left in PyTorch beside the kernels
    "weights-prepared",       # the reference's modules built in its order, then a buffer made once from their
                              # weights (transposed, contiguous, concatenated) that the kernel reads
    "weights-cached-lazily",  # a weight derived from the module's own parameters on the first call, kept in an
                              # attribute, made again when the parameter's version or storage changes
    "no-grad-forward",        # forward under @torch.no_grad() or torch.inference_mode() (an inference tensor out)
    "out-variant",            # .contiguous() on the inputs and a PyTorch op writing into a fresh buffer by out=
    "unused-module",          # a submodule built in __init__ (as a translation of the reference would) never called
    "other-dtype-intermediate",  # kernels passing an intermediate of another dtype (int32 indices, float64 partials)
    "lazy-build",             # a CUDA extension compiled in ModelNew.__init__, not when the file is imported
    "sync-in-forward",        # forward ends with torch.cuda.synchronize()
    "current-stream",         # the launch placed explicitly on torch.cuda.current_stream() (no other stream)
    "reference-copied",       # the reference program (sizes, Model, get_inputs) copied above ModelNew, never called
                              # (ModelNew built on the copied Model to keep its layers, forward overridden)
    "self-test-block",        # an `if __name__ == "__main__":` block that seeds, times, compares and exits
    "thread-primitives",      # threading's Lock and local storage used, no thread started
    "seeded-outside-forward",  # the RNGs seeded at import and in __init__ (after the layers are built)
    "build-environment",      # a build's environment variables set at import (TORCH_CUDA_ARCH_LIST, MAX_JOBS, ...)
    "custom-op",              # the kernels inside an operator of its own (torch.library.custom_op) that forward calls
    "pinned-settings-restated",  # TF32 off, matmul precision "highest" set at import: the values the judge pins
    "quiet-gc",               # sys.stdout swapped for a buffer while setting up, gc.collect() in __init__
    "device-fallback",        # PyTorch for a tensor off the GPU or of another dtype (``if not x.is_cuda: ...``)
    "source-file",            # the CUDA source written to a file of its own (mkstemp, fdopen), built by load()
    "default-stream",         # CUDA launched with no stream (<<<blocks, threads>>>), KernelBench's usual form
    "autocast-off",           # the kernel launched inside torch.autocast(..., enabled=False)
    "parallel-builds",        # extensions built at once in a thread pool entered by `with` (joined at its end)
    # Forms that names alone read as cheats (issue 58): what the name is bound to decides.
    "module-named-variable",  # a variable named like a module: a tensor `signal`, a loop variable `gc`
    "self-test-function",     # a top-level self-test function that only the `__main__` block calls (sys.exit)
    "judge-environment",      # os.environ.setdefault of a variable the judge sets in every worker (TRITON_INTERPRET)
    "slower-only-settings",   # settings that can only slow or keep precision (cudnn.deterministic, reductions off)
    "system-information",     # /proc/cpuinfo read to choose build flags
    "typing-final",           # `from torch.jit import Final` as a type annotation
    "cast-up",                # torch.amp.custom_fwd(cast_inputs=torch.float32)
    "native-thread-pool",     # an extension's C++ run on blocks from a thread pool forward opens and joins
    "callable-object",        # a pybind11 object of the extension called through __call__
    # Habits of model-written answers (docs/measurements/2026-12-06-model-habits.md), issue 58 item 5.
    "autograd-function",      # the kernel inside a torch.autograd.Function called through .apply
    "language-extended",      # a helper added to triton.language where it lacks the name (hasattr guard)
    "launch-cache",           # launch configurations kept in a module-level dict and an lru_cache
    "import-guarded",         # Triton imported under try/except ImportError with a PyTorch path (HAS_TRITON)
    "checked-inputs",         # TypeError/ValueError/assert on the input, data_ptr() alignment choosing a path
    "strided-operand",        # an operand read through its strides (B.T never copied)
    "library-scan-reduce",    # tl.associative_scan / tl.reduce with a combine function of its own
    "triton-heuristics",      # @triton.heuristics choosing a block size from the arguments
    "launcher-object",        # a launcher class of its own whose __call__ launches the kernel
    "logging-warnings",       # a module logger (NullHandler, debug per call) and warnings.warn on a copy
    "defaults-restated",      # torch.set_default_dtype(torch.float32), set_printoptions at import
    "reproducibility-block",  # use_deterministic_algorithms(True, warn_only=True), cudnn.benchmark = False
    "profiler-label",         # the launch inside torch.profiler.record_function
    "compiler-disabled",      # the launcher decorated @torch.compiler.disable
    "typed-config",           # typing.Final, TYPE_CHECKING imports, a frozen dataclass config, __all__
    "openmp",                 # C++ for the CPU with #pragma omp parallel for (-fopenmp)
    "aten-parallel",          # at::parallel_for inside AT_DISPATCH_FLOATING_TYPES
    "hashed-build-name",      # an extension named by a hash of its source, its build log redirected
    "own-parameters",         # parameters declared by hand and initialised as nn.Linear does
    "launch-checked",         # CUDA launched on getCurrentCUDAStream() and C10_CUDA_KERNEL_LAUNCH_CHECK()
    "persistent-grid",        # a persistent grid sized by the device's multiprocessor count
})
# cuda: C++/CUDA built by torch.utils.cpp_extension (load_inline or load); cpp: C++ for the CPU built the same way
LANGUAGES = ("triton", "cuda", "cpp")
DEVICES = ("cpu", "gpu")


@dataclass(frozen=True)
class Honest:
    """One honest solution: the file, its problem, where it runs, what it exercises."""

    file: str  # file name in tests/honest, with .py
    problem: str  # a suite id, e.g. "level2/gemm_bias_relu"
    language: str  # "triton" or "cuda" (load_inline)
    devices: tuple[str, ...]  # where it can be judged: ("cpu", "gpu") or ("gpu",)
    traits: frozenset[str]
    style_flags: frozenset[str] = frozenset()  # style (or flag-only) rules it may honestly carry under lenient
    cpu_subset: bool = False  # judged in make test (tests/test_honest.py)
    # Rules that flag this solution today although it does nothing they describe: defects
    # of the judge, counted as false positives by the benchmark, allowed by the test until fixed.
    known_false_flags: frozenset[str] = frozenset()
    verified: bool = True  # False: GPU only, never run yet (written without a GPU)

    @property
    def path(self) -> Path:
        return HERE / self.file

    @property
    def name(self) -> str:
        return self.file.removesuffix(".py")

    @property
    def level(self) -> int:
        return int(self.problem.split("/")[0].removeprefix("level"))


def _row(file: str, problem: str, traits: str, *, gpu_only: bool = False, language: str = "triton",
         flags: str = "", cpu_subset: bool = False, known: str = "") -> Honest:
    return Honest(
        file=file, problem=problem, language=language,
        devices=("gpu",) if gpu_only else ("cpu",) if language == "cpp" else ("cpu", "gpu"),
        traits=frozenset(traits.split()), style_flags=frozenset(flags.split()),
        cpu_subset=cpu_subset, verified=not gpu_only or file in RUN_ON_A_GPU, known_false_flags=frozenset(known.split()),
    )


# GPU-only files judged on the H200 (2026-12-01, benchmarks/false_positives.py): correct.
RUN_ON_A_GPU = frozenset({
    "l1_relu_side_stream_joined.py", "l1_gelu_cuda_graph.py", "l1_gelu_autotune.py", "l1_matmul_square_autotune.py",
    "l2_linear_gelu_cuda_graph.py", "l3_mlp_deep_relu_cuda_graph.py", "l3_resnet_basic_block_side_stream.py",
    # and on 2026-12-05 (docs/measurements/2026-12-05-h200-corpus-fourth-batch.log)
    "l1_leaky_relu_cuda_default_stream.py", "l2_conv2d_relu_cuda_default_stream.py",
    "l2_gemm_bias_relu_cuda_parallel_builds.py", "l1_gelu_tanh_cuda_device_fallback.py",
})


CORPUS: list[Honest] = [
    # --- level 1, Triton (CPU and GPU) ---------------------------------------------------
    _row("l1_relu_serial.py", "level1/relu", "slow one-launch huge-output"),
    _row("l1_sigmoid_many_launches.py", "level1/sigmoid", "many-launches"),
    _row("l1_leaky_relu_transposed.py", "level1/leaky_relu", "view-output one-launch huge-output"),
    _row("l1_hardtanh_padded_slice.py", "level1/hardtanh", "view-output one-launch huge-output", cpu_subset=True),
    _row("l1_tanh_channels_last.py", "level1/tanh", "view-output one-launch huge-output"),
    _row("l1_swish_two_pass_inplace.py", "level1/swish", "inplace-fresh-output huge-output", cpu_subset=True),
    _row("l1_gelu_fast.py", "level1/gelu", "fast one-launch huge-output"),
    _row("l1_softmax_kept_workspace.py", "level1/softmax", "workspace-kept"),
    _row("l1_sum_dim_split_workspace.py", "level1/sum_dim", "workspace-per-call"),
    _row("l1_mse_loss_two_stage.py", "level1/mse_loss", "tiny-output workspace-per-call"),
    _row("l1_cross_entropy_rows.py", "level1/cross_entropy", "tiny-output workspace-per-call"),
    _row("l1_hinge_loss_serial.py", "level1/hinge_loss", "slow one-launch tiny-output", cpu_subset=True),
    _row("l1_kl_div_loss_atomic.py", "level1/kl_div_loss", "tiny-output atomics one-launch", cpu_subset=True),
    _row("l1_cosine_similarity_loss.py", "level1/cosine_similarity_loss", "tiny-output workspace-per-call"),
    _row("l1_matmul_small_k_naive.py", "level1/matmul_small_k", "slow one-launch huge-output"),
    _row("l1_matmul_square_tiled.py", "level1/matmul_square", "one-launch"),
    _row("l1_matmul_large_k_splitk.py", "level1/matmul_large_k", "workspace-kept"),
    _row("l1_matvec_rows.py", "level1/matvec", "one-launch"),
    _row("l1_layer_norm_rows.py", "level1/layer_norm", "fast one-launch huge-output"),
    _row("l1_rms_norm_rows.py", "level1/rms_norm", "fast one-launch huge-output"),
    _row("l1_cumsum_blocked.py", "level1/cumsum", "one-launch huge-output"),
    _row("l1_argmax_dim.py", "level1/argmax_dim", "int-output one-launch", cpu_subset=True),
    _row("l1_mean_dim.py", "level1/mean_dim", "one-launch"),
    _row("l1_frobenius_norm_kept_scalar.py", "level1/frobenius_norm", "workspace-kept workspace-per-call huge-output",
         cpu_subset=True),
    _row("l1_embedding_gather.py", "level1/embedding", "one-launch huge-output"),
    _row("l1_maxpool2d_direct.py", "level1/maxpool2d", "one-launch"),
    _row("l1_conv2d_direct_naive.py", "level1/conv2d", "slow one-launch"),
    _row("l1_l2_norm_rows.py", "level1/l2_norm", "one-launch huge-output"),
    _row("l1_log_softmax_no_grad.py", "level1/log_softmax", "no-grad-forward one-launch huge-output"),
    _row("l1_elu_inference_mode.py", "level1/elu", "no-grad-forward one-launch huge-output"),
    _row("l1_maxpool1d_int32_indices.py", "level1/maxpool1d", "other-dtype-intermediate workspace-per-call"),
    _row("l1_smooth_l1_loss_fp64_partials.py", "level1/smooth_l1_loss",
         "other-dtype-intermediate workspace-per-call tiny-output"),
    # Forms of model-written answers that read like cheats to a rule that looks at names alone.
    _row("l1_selu_reference_copied.py", "level1/selu", "reference-copied one-launch huge-output"),
    _row("l1_softplus_self_test_block.py", "level1/softplus", "self-test-block one-launch huge-output",
         cpu_subset=True),
    _row("l1_relu6_thread_lock.py", "level1/relu6", "thread-primitives one-launch huge-output"),
    _row("l1_mish_build_environment.py", "level1/mish", "build-environment one-launch huge-output"),
    _row("l1_sigmoid_custom_op.py", "level1/sigmoid", "custom-op one-launch huge-output"),
    _row("l1_relu_quiet_gc.py", "level1/relu", "quiet-gc one-launch huge-output"),
    _row("l1_hardsigmoid_autocast_off.py", "level1/hardsigmoid", "autocast-off one-launch huge-output"),
    # Issue 58: rejected (or flagged) on a name or a string before rules read what names are bound to.
    _row("l1_softsign_signal_tensor.py", "level1/softsign", "module-named-variable one-launch huge-output"),
    _row("l1_selu_self_test_function.py", "level1/selu", "self-test-function one-launch huge-output"),
    _row("l1_gelu_interpret_setdefault.py", "level1/gelu", "judge-environment one-launch huge-output"),
    _row("l1_rms_norm_final_eps.py", "level1/rms_norm", "typing-final one-launch huge-output"),
    _row("l1_gelu_tanh_custom_fwd.py", "level1/gelu_tanh", "cast-up one-launch huge-output"),
    # Habits of model-written answers (issue 58 item 5, docs/measurements/2026-12-06-model-habits.md).
    _row("l1_tanh_autograd_function.py", "level1/tanh", "autograd-function one-launch huge-output"),
    _row("l1_hardtanh_language_extended.py", "level1/hardtanh", "language-extended one-launch huge-output"),
    _row("l1_gelu_launch_cache.py", "level1/gelu", "launch-cache one-launch huge-output"),
    _row("l1_relu_import_guarded.py", "level1/relu", "import-guarded one-launch huge-output"),
    _row("l1_sigmoid_checked_inputs.py", "level1/sigmoid", "checked-inputs one-launch huge-output"),
    _row("l1_matmul_transposed_b_strided.py", "level1/matmul_transposed_b", "strided-operand one-launch"),
    _row("l1_cumsum_associative_scan.py", "level1/cumsum", "library-scan-reduce one-launch huge-output"),
    _row("l1_softmax_heuristics.py", "level1/softmax", "triton-heuristics one-launch"),
    _row("l1_softplus_launcher_class.py", "level1/softplus", "launcher-object one-launch huge-output"),
    _row("l1_relu6_logging_warnings.py", "level1/relu6", "logging-warnings one-launch huge-output"),
    _row("l1_elu_defaults_restated.py", "level1/elu", "defaults-restated one-launch huge-output"),
    _row("l1_mish_reproducibility_boilerplate.py", "level1/mish", "reproducibility-block one-launch huge-output",
         cpu_subset=True),
    _row("l1_layer_norm_record_function.py", "level1/layer_norm", "profiler-label one-launch huge-output"),
    _row("l1_gelu_tanh_compiler_disable.py", "level1/gelu_tanh", "compiler-disabled one-launch huge-output"),
    _row("l1_leaky_relu_typed_config.py", "level1/leaky_relu", "typed-config one-launch huge-output"),
    # --- level 1, C++ for the CPU (load_inline; CPU only: the kernels read host memory) ---------
    _row("l1_relu_cpp_cpuinfo_flags.py", "level1/relu", "system-information one-launch", language="cpp"),
    _row("l1_swish_cpp_thread_pool.py", "level1/swish", "native-thread-pool", language="cpp"),
    _row("l1_leaky_relu_cpp_callable.py", "level1/leaky_relu", "callable-object one-launch", language="cpp"),
    _row("l1_hardsigmoid_cpp_torch_library.py", "level1/hardsigmoid", "custom-op one-launch", language="cpp"),
    _row("l1_relu_cpp_openmp.py", "level1/relu", "openmp native-thread-pool one-launch", language="cpp"),
    _row("l1_sigmoid_cpp_parallel_for.py", "level1/sigmoid", "aten-parallel one-launch", language="cpp"),
    _row("l1_tanh_cpp_hashed_name.py", "level1/tanh", "hashed-build-name one-launch", language="cpp"),
    # --- level 1, GPU only (CUDA, streams, graphs, autotuning) ----------------------------
    _row("l1_matmul_square_cuda_naive.py", "level1/matmul_square", "slow one-launch", gpu_only=True, language="cuda"),
    _row("l1_mse_loss_cuda_single_block.py", "level1/mse_loss", "slow one-launch tiny-output", gpu_only=True,
         language="cuda"),
    _row("l1_sum_dim_cuda_thread_per_output.py", "level1/sum_dim", "one-launch", gpu_only=True, language="cuda"),
    _row("l1_relu_cuda_many_launches.py", "level1/relu", "many-launches huge-output", gpu_only=True, language="cuda"),
    _row("l1_relu_cuda_vectorized.py", "level1/relu", "fast huge-output", gpu_only=True, language="cuda"),
    _row("l1_softmax_cuda_warp.py", "level1/softmax", "fast one-launch", gpu_only=True, language="cuda"),
    _row("l1_layer_norm_cuda_block.py", "level1/layer_norm", "one-launch huge-output", gpu_only=True, language="cuda"),
    _row("l1_cross_entropy_cuda_atomic.py", "level1/cross_entropy", "tiny-output atomics one-launch", gpu_only=True,
         language="cuda"),
    _row("l1_relu_side_stream_joined.py", "level1/relu", "side-stream-joined one-launch huge-output", gpu_only=True,
         flags="side-stream"),
    _row("l1_gelu_cuda_graph.py", "level1/gelu", "cuda-graph workspace-kept huge-output", gpu_only=True),
    _row("l1_gelu_autotune.py", "level1/gelu", "autotune fast huge-output", gpu_only=True),
    _row("l1_matmul_square_autotune.py", "level1/matmul_square", "autotune fast", gpu_only=True),
    _row("l1_hardsigmoid_cuda_build_in_init.py", "level1/hardsigmoid", "lazy-build one-launch huge-output",
         gpu_only=True, language="cuda"),
    _row("l1_hardsigmoid_cuda_build_at_import.py", "level1/hardsigmoid", "one-launch huge-output", gpu_only=True,
         language="cuda"),
    _row("l1_leaky_relu_cuda_default_stream.py", "level1/leaky_relu", "default-stream one-launch huge-output",
         gpu_only=True, language="cuda"),
    _row("l1_sigmoid_cuda_source_file.py", "level1/sigmoid", "source-file one-launch huge-output", gpu_only=True,
         language="cuda"),
    _row("l1_gelu_tanh_cuda_device_fallback.py", "level1/gelu_tanh", "device-fallback one-launch huge-output",
         gpu_only=True, language="cuda"),
    _row("l1_gelu_tanh_sync_at_end.py", "level1/gelu_tanh", "sync-in-forward one-launch huge-output", gpu_only=True),
    _row("l1_relu_cuda_launch_check.py", "level1/relu", "launch-checked current-stream one-launch huge-output",
         gpu_only=True, language="cuda"),
    _row("l1_softmax_persistent_sm_count.py", "level1/softmax", "persistent-grid one-launch", gpu_only=True),
    # Flagged side-stream until 2026-12-04: the static reading flagged every torch.cuda.stream(...),
    # also a context of the stream already current, which makes no stream.
    _row("l1_softsign_current_stream.py", "level1/softsign", "current-stream one-launch huge-output", gpu_only=True),
    # --- level 2 -------------------------------------------------------------------------
    _row("l2_gemm_bias_relu_epilogue.py", "level2/gemm_bias_relu", "kernelbench-style", cpu_subset=True),
    _row("l2_gemm_bias_relu_fused_dot.py", "level2/gemm_bias_relu", "one-launch"),
    _row("l2_linear_gelu_epilogue.py", "level2/linear_gelu", "kernelbench-style"),
    _row("l2_conv2d_relu_epilogue.py", "level2/conv2d_relu", "kernelbench-style"),
    _row("l2_conv2d_relu_module_inplace.py", "level2/conv2d_relu", "kernelbench-style inplace-fresh-output"),
    _row("l2_conv2d_batch_norm_relu_stats.py", "level2/conv2d_batch_norm_relu", "kernelbench-style workspace-per-call"),
    _row("l2_conv2d_relu_global_avg_pool_mixed.py", "level2/conv2d_relu_global_avg_pool",
         "kernelbench-style mixed-pytorch", flags="torch-compute", cpu_subset=True),
    _row("l2_linear_log_softmax_epilogue.py", "level2/linear_log_softmax", "kernelbench-style"),
    _row("l2_linear_cross_entropy_rows.py", "level2/linear_cross_entropy", "kernelbench-style"),
    _row("l2_linear_residual_layer_norm_mixed.py", "level2/linear_residual_layer_norm",
         "kernelbench-style mixed-pytorch", flags="torch-compute"),
    _row("l2_linear_swiglu_epilogue.py", "level2/linear_swiglu", "kernelbench-style"),
    _row("l2_linear_gelu_weight_t_buffer.py", "level2/linear_gelu", "weights-prepared one-launch"),
    _row("l2_linear_swiglu_concat_weight.py", "level2/linear_swiglu", "weights-prepared one-launch", cpu_subset=True),
    _row("l2_gemm_bias_relu_lazy_weight_t.py", "level2/gemm_bias_relu", "weights-cached-lazily one-launch"),
    # Flagged torch-compute (its one-time fold, a mul) whenever the recorded trial was the model's first
    # call, until the recorded trial was made never the first (kbench.judge.trusted.calls.record_index).
    _row("l2_linear_clamp_scale_lazy_folded.py", "level2/linear_clamp_scale", "weights-cached-lazily one-launch",
         cpu_subset=True),
    _row("l2_gemm_bias_relu_custom_op.py", "level2/gemm_bias_relu", "custom-op kernelbench-style"),
    _row("l2_linear_gelu_model_subclass.py", "level2/linear_gelu", "reference-copied kernelbench-style"),
    _row("l2_gemm_bias_relu_tf32_off.py", "level2/gemm_bias_relu", "pinned-settings-restated kernelbench-style"),
    _row("l2_conv2d_relu_deterministic.py", "level2/conv2d_relu", "slower-only-settings kernelbench-style"),
    _row("l2_linear_gelu_reduced_precision_off.py", "level2/linear_gelu", "slower-only-settings kernelbench-style"),
    _row("l2_linear_gelu_seeded.py", "level2/linear_gelu", "seeded-outside-forward kernelbench-style",
         cpu_subset=True),
    _row("l2_linear_selu_out_variants.py", "level2/linear_selu", "out-variant kernelbench-style inplace-fresh-output"),
    _row("l2_conv2d_relu_max_pool_unused_modules.py", "level2/conv2d_relu_max_pool", "unused-module kernelbench-style"),
    _row("l2_gemm_bias_relu_own_parameters.py", "level2/gemm_bias_relu", "own-parameters one-launch"),
    _row("l2_gemm_bias_relu_cuda_epilogue.py", "level2/gemm_bias_relu", "kernelbench-style", gpu_only=True,
         language="cuda"),
    _row("l2_conv2d_relu_cuda_default_stream.py", "level2/conv2d_relu", "default-stream kernelbench-style",
         gpu_only=True, language="cuda"),
    _row("l2_gemm_bias_relu_cuda_parallel_builds.py", "level2/gemm_bias_relu", "parallel-builds kernelbench-style",
         gpu_only=True, language="cuda"),
    _row("l2_conv2d_batch_norm_relu_cuda.py", "level2/conv2d_batch_norm_relu", "kernelbench-style workspace-per-call",
         gpu_only=True, language="cuda"),
    _row("l2_linear_gelu_cuda_graph.py", "level2/linear_gelu", "kernelbench-style cuda-graph workspace-kept",
         gpu_only=True, flags="side-stream"),
    # --- level 3 -------------------------------------------------------------------------
    _row("l3_mlp_deep_relu_epilogues.py", "level3/mlp_deep_relu", "kernelbench-style"),
    _row("l3_mlp_deep_relu_dot.py", "level3/mlp_deep_relu", ""),
    _row("l3_mlp_deep_relu_gc_loop.py", "level3/mlp_deep_relu", "module-named-variable kernelbench-style"),
    _row("l3_vae_mlp_epilogues.py", "level3/vae_mlp", "kernelbench-style multi-output", cpu_subset=True),
    _row("l3_resnet_basic_block_mixed.py", "level3/resnet_basic_block",
         "kernelbench-style mixed-pytorch workspace-per-call inplace-fresh-output", flags="torch-compute"),
    _row("l3_mlp_deep_relu_cuda_graph.py", "level3/mlp_deep_relu", "kernelbench-style cuda-graph workspace-kept",
         gpu_only=True, flags="side-stream"),
    _row("l3_resnet_basic_block_side_stream.py", "level3/resnet_basic_block",
         "kernelbench-style side-stream-joined workspace-per-call", gpu_only=True, flags="side-stream"),
    # --- level 4 -------------------------------------------------------------------------
    _row("l4_llama3_8b_mlp_epilogue.py", "level4/llama3_8b_mlp", "kernelbench-style",
         cpu_subset=True),
    _row("l4_gemma_7b_mlp_dot.py", "level4/gemma_7b_mlp", ""),
    _row("l4_llama3_8b_mlp_cuda.py", "level4/llama3_8b_mlp", "kernelbench-style", gpu_only=True, language="cuda"),
]


def select(device: str, only: list[str] | None = None) -> list[Honest]:
    """The rows judged on ``device`` (``cpu`` or ``gpu``/``cuda``), optionally only those
    whose name or problem id contains one of ``only``."""
    kind = "gpu" if device.startswith("cuda") or device == "gpu" else "cpu"
    rows = [row for row in CORPUS if kind in row.devices]
    if only:
        rows = [row for row in rows if any(word in row.name or word in row.problem for word in only)]
    return rows
