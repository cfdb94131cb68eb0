"""What the aten operations a forward ran say about who did its work: the rule
``torch-compute``, read by the judge from the operations both workers recorded
(``OpRecorder``, in one call of its own on each side).

Every operation a forward runs through PyTorch's dispatcher (from Python, or
from C++ inside an extension: ``at::exp`` is dispatched too) is one of:

- structural (``runtime.STRUCTURAL_OPS``): allocation, views, copies, fills,
  dtype and layout casts, shape queries. Never work;
- a library call (``LIBRARY``): a matrix product (cuBLAS), a convolution
  (cuDNN), a recurrent layer or fused attention. A kernel solution may leave
  to PyTorch the kinds of library call the reference itself makes, beside
  kernels of its own that do the rest of the reference's work;
- data movement with computed addresses (``REARRANGING``): concatenation,
  padding, indexing, gathers, masks, nearest upsampling. Glue beside kernels,
  unless moving data is all the reference does; but movement that does
  arithmetic on values computes, and the recorder names it so
  (``guard.provenance``): a scatter or ``index_put`` that accumulates
  (``index_put[accumulate]``, ``scatter[reduce=add]``), a lookup or mask
  keyed by floating-point values forward converted (``index[by value]``);
- everything else computes: arithmetic, activations, reductions,
  normalisations, comparisons, sorting, scans, pooling.

Operations registered outside PyTorch's own namespaces (an extension's
``mylib::softmax``) arrive qualified (``ns::name``) and are the solution's own.
"""

from __future__ import annotations

from kbench.judge.guard import Finding
from kbench.judge.guard.runtime import compute_ops

LIBRARY: dict[str, frozenset[str]] = {
    "a matrix product": frozenset({
        "mm", "addmm", "bmm", "baddbmm", "addbmm", "mv", "addmv", "dot", "vdot", "matmul", "linear", "_grouped_mm",
    }),
    "a convolution": frozenset({
        "convolution", "_convolution", "_convolution_mode", "conv1d", "conv2d", "conv3d", "conv_transpose1d",
        "conv_transpose2d", "conv_transpose3d", "conv_tbc", "cudnn_convolution", "cudnn_convolution_transpose",
        "miopen_convolution", "miopen_convolution_transpose", "miopen_depthwise_convolution", "mkldnn_convolution",
        "_slow_conv2d_forward", "slow_conv3d_forward", "slow_conv3d", "thnn_conv2d", "slow_conv_dilated2d",
        "slow_conv_dilated3d", "slow_conv_transpose2d", "slow_conv_transpose3d", "_conv_depthwise2d",
        "conv_depthwise3d", "_nnpack_spatial_convolution",
    }),
    "a recurrent layer": frozenset({
        "lstm", "gru", "rnn_tanh", "rnn_relu", "_cudnn_rnn", "_cudnn_rnn_flatten_weight", "miopen_rnn",
        "mkldnn_rnn_layer", "_thnn_fused_lstm_cell", "_thnn_fused_gru_cell", "lstm_cell", "gru_cell",
        "rnn_tanh_cell", "rnn_relu_cell",
    }),
    "fused attention": frozenset({
        "scaled_dot_product_attention", "_fused_sdp_choice", "_scaled_dot_product_attention_math",
        "_scaled_dot_product_flash_attention", "_scaled_dot_product_flash_attention_for_cpu",
        "_scaled_dot_product_efficient_attention", "_scaled_dot_product_cudnn_attention",
        "_scaled_dot_product_fused_attention_overrideable", "_flash_attention_forward", "_efficient_attention_forward",
    }),
}

REARRANGING = frozenset({
    "cat", "stack", "constant_pad_nd", "reflection_pad1d", "reflection_pad2d", "reflection_pad3d",
    "replication_pad1d", "replication_pad2d", "replication_pad3d", "repeat", "repeat_interleave", "flip", "roll",
    "index", "_unsafe_index", "index_select", "gather", "take", "embedding", "narrow_copy", "masked_fill",
    "masked_scatter", "masked_select", "index_put", "_index_put_impl", "_unsafe_index_put", "scatter", "tril",
    "triu", "tril_indices", "triu_indices", "diag", "diag_embed", "block_diag", "pixel_shuffle", "pixel_unshuffle",
    "channel_shuffle", "native_channel_shuffle", "im2col", "upsample_nearest1d", "upsample_nearest2d",
    "upsample_nearest3d", "_upsample_nearest_exact1d", "_upsample_nearest_exact2d", "_upsample_nearest_exact3d",
})


def library_call(op: str) -> str | None:
    """The kind of library call ``op`` is (``"a matrix product"``), or None."""
    return next((kind for kind, ops in LIBRARY.items() if op in ops), None)


def _pytorch_compute(ops: list[str] | set[str]) -> set[str]:
    """The computing operations of PyTorch itself (not an extension's ``ns::name``)."""
    return {op for op in compute_ops(ops) if "::" not in op}


def torch_compute_findings(reference_ops: list[str] | set[str], candidate_ops: list[str] | set[str]) -> list[Finding]:
    """``torch-compute``: forward computes with PyTorch operations instead of kernels.

    It fires when the candidate's forward runs (1) any computing operation that is
    neither a library call nor data movement, whichever it is (``exp``, ``amax``,
    ``clamp_min``, ``where``); (2) a library call of a kind the reference does not
    make (a sum as a product with a ones vector, a pooling as a convolution), or any
    library call where the reference's work is library calls alone (a matrix-product
    problem computed by ``torch.mm``, whatever the kernel beside it does); (3) data
    movement where moving data is all the reference does (a gather problem).
    """
    ran, reference = _pytorch_compute(candidate_ops), _pytorch_compute(reference_ops)
    made = {library_call(op) for op in reference} - {None}
    reference_work = {op for op in reference if library_call(op) is None and op not in REARRANGING}
    reasons = []
    plain = sorted(op for op in ran if library_call(op) is None and op not in REARRANGING)
    if plain:
        reasons.append(f"forward computes with PyTorch operations: {', '.join(plain)}")
        if any("[" in op for op in plain):
            reasons[-1] += (" (data movement that accumulates, or whose index or mask forward converted from "
                            "floating-point values, computes)")
    foreign = sorted(op for op in ran if library_call(op) and library_call(op) not in made)
    if foreign:
        reasons.append(f"forward leaves {', '.join(foreign)} to PyTorch, a library call of a kind the reference "
                       "does not make")
    whole = sorted(op for op in ran if library_call(op) in made and not reference_work)
    if whole:
        reasons.append(f"forward leaves {', '.join(whole)} to PyTorch, where such library calls are all the "
                       "reference computes with")
    moved = sorted(op for op in ran & REARRANGING if not reference - REARRANGING)
    if moved:
        reasons.append(f"forward leaves {', '.join(moved)} to PyTorch, where moving data is all the reference does")
    return [Finding("torch-compute", "; ".join(reasons))] if reasons else []
