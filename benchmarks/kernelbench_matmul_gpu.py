"""Float32 matrix products in KernelBench's formats, judged on a GPU under both criteria (issue 58).

KernelBench's level-1 products (a square one, a rectangular one, one with B transposed) are
written here as KernelBench lays them out (``DIR/level1/N_Name.py``: ``Model``, size constants,
``get_inputs``), with the answers models write for them: a naive CUDA loop (a thread per output,
the sum over k one term after another), a CUDA kernel tiled through shared memory, a CUDA loop
reading B transposed, and a tiled Triton kernel (``input_precision="ieee"``). Each is judged by the
truth criterion (the default) and by KernelBench's constant tolerance (``--correctness kernelbench``);
honest summation orders must be ``correct`` by the truth. Wrong answers must stay ``incorrect``
under both: a Triton product in TF32 (lower precision), a CUDA loop that drops the last term of
each sum, and a scalar mean off by its own size (twice the mean).

    PYTHONPATH=src python3 benchmarks/kernelbench_matmul_gpu.py [--device cuda] [--only naive ...] --out $OUT/kb_matmul.json
    TRITON_INTERPRET=1 PYTHONPATH=src python3 benchmarks/kernelbench_matmul_gpu.py --device cpu --size small --only triton_tiled_ieee

Prints one row per (problem, solution, criterion): the status, the share of the truth's allowance
used, the reference's own error against the float64 truth, and whether the expectation held; exit
status 1 where one did not. On a CPU (the smoke run below) TF32 is computed in float32 by Triton's
interpreter, so the ``triton_tiled_tf32`` rows hold only on a GPU; the CUDA rows need one.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import kbench
from kbench.judge import build

SMALL = "KBENCH_SMALL = {'M': 64, 'K': 160, 'N': 96}\n"  # kbench's small size (a CPU smoke run); KernelBench ignores it
PROBLEMS = {
    "1_Square_matrix_multiplication_.py": ("N = 2048\nKBENCH_SMALL = {'N': 96}\n", "torch.matmul(A, B)", "[torch.randn(N, N), torch.randn(N, N)]"),
    "2_Standard_matrix_multiplication_.py": ("M = 1024\nK = 4096\nN = 2048\n" + SMALL, "torch.matmul(A, B)",
                                             "[torch.randn(M, K), torch.randn(K, N)]"),
    "17_Matmul_with_transposed_B.py": ("M = 1024\nK = 4096\nN = 2048\n" + SMALL, "torch.matmul(A, B.T)",
                                       "[torch.randn(M, K), torch.randn(N, K)]"),
}
MEAN_PROBLEM = ("48_Mean_of_all_elements.py", "batch_size = 16\ndim = 16384\nKBENCH_SMALL = {'dim': 512}\n", "torch.mean(A)",
                "[torch.randn(batch_size, dim)]")

PROBLEM_TEMPLATE = '''import torch
import torch.nn as nn

{sizes}

class Model(nn.Module):
    def __init__(self):
        super(Model, self).__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor = None) -> torch.Tensor:
        return {expression}


def get_inputs():
    return {inputs}


def get_init_inputs():
    return []
'''

CUDA_HEAD = '''import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

source = r"""
#include <torch/extension.h>
#include <cuda_runtime.h>
{kernel}
"""
cpp_source = "torch::Tensor {name}_cuda(torch::Tensor A, torch::Tensor B);"

{name} = load_inline(name="{name}", cpp_sources=cpp_source, cuda_sources=source, functions=["{name}_cuda"],
                     verbose=False, extra_cuda_cflags=["-O3"])


class ModelNew(nn.Module):
    def __init__(self):
        super(ModelNew, self).__init__()
        self.op = {name}

    def forward(self, A, B):
        return self.op.{name}_cuda(A.contiguous(), B.contiguous())
'''

# C = A @ B (B: K x N) or A @ B.T (B: N x K); one thread per output, k one after another.
NAIVE = '''
__global__ void naive_kernel(const float* A, const float* B, float* C, int M, int N, int K, int b_transposed, int drop) {
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    if (row < M && col < N) {
        float sum = 0.0f;
        for (int k = 0; k < K - drop; ++k) {
            float b = b_transposed ? B[col * K + k] : B[k * N + col];
            sum += A[row * K + k] * b;
        }
        C[row * N + col] = sum;
    }
}

torch::Tensor {name}_cuda(torch::Tensor A, torch::Tensor B) {
    int M = A.size(0), K = A.size(1);
    int N = {b_transposed} ? B.size(0) : B.size(1);
    auto C = torch::zeros({M, N}, A.options());
    dim3 threads(16, 16);
    dim3 blocks((N + 15) / 16, (M + 15) / 16);
    naive_kernel<<<blocks, threads>>>(A.data_ptr<float>(), B.data_ptr<float>(), C.data_ptr<float>(), M, N, K,
                                      {b_transposed}, {drop});
    return C;
}
'''

TILED = '''
#define TILE 16
__global__ void tiled_kernel(const float* A, const float* B, float* C, int M, int N, int K) {
    __shared__ float As[TILE][TILE];
    __shared__ float Bs[TILE][TILE];
    int row = blockIdx.y * TILE + threadIdx.y;
    int col = blockIdx.x * TILE + threadIdx.x;
    float sum = 0.0f;
    for (int t = 0; t < (K + TILE - 1) / TILE; ++t) {
        int ka = t * TILE + threadIdx.x;
        int kb = t * TILE + threadIdx.y;
        As[threadIdx.y][threadIdx.x] = (row < M && ka < K) ? A[row * K + ka] : 0.0f;
        Bs[threadIdx.y][threadIdx.x] = (kb < K && col < N) ? B[kb * N + col] : 0.0f;
        __syncthreads();
        for (int i = 0; i < TILE; ++i) sum += As[threadIdx.y][i] * Bs[i][threadIdx.x];
        __syncthreads();
    }
    if (row < M && col < N) C[row * N + col] = sum;
}

torch::Tensor {name}_cuda(torch::Tensor A, torch::Tensor B) {
    int M = A.size(0), K = A.size(1), N = B.size(1);
    auto C = torch::empty({M, N}, A.options());
    dim3 threads(TILE, TILE);
    dim3 blocks((N + TILE - 1) / TILE, (M + TILE - 1) / TILE);
    tiled_kernel<<<blocks, threads>>>(A.data_ptr<float>(), B.data_ptr<float>(), C.data_ptr<float>(), M, N, K);
    return C;
}
'''

TRITON = '''import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, s_bk, s_bn, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr,
                  PRECISION: tl.constexpr):
    rows = tl.program_id(0) * BM + tl.arange(0, BM)
    cols = tl.program_id(1) * BN + tl.arange(0, BN)
    ks = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        a = tl.load(a_ptr + rows[:, None] * K + k + ks[None, :], mask=(rows[:, None] < M) & (k + ks[None, :] < K),
                    other=0.0)
        b = tl.load(b_ptr + (k + ks[:, None]) * s_bk + cols[None, :] * s_bn,
                    mask=(k + ks[:, None] < K) & (cols[None, :] < N), other=0.0)
        acc = tl.dot(a, b, acc, input_precision=PRECISION)
    tl.store(c_ptr + rows[:, None] * N + cols[None, :], acc, mask=(rows[:, None] < M) & (cols[None, :] < N))


class ModelNew(nn.Module):
    def __init__(self):
        super(ModelNew, self).__init__()

    def forward(self, A, B):
        A = A.contiguous()
        M, K = A.shape
        if {b_transposed}:
            N, s_bk, s_bn = B.shape[0], B.stride(1), B.stride(0)
        else:
            N, s_bk, s_bn = B.shape[1], B.stride(0), B.stride(1)
        C = torch.empty((M, N), device=A.device, dtype=torch.float32)
        grid = (triton.cdiv(M, 64), triton.cdiv(N, 64))
        matmul_kernel[grid](A, B, C, M, N, K, s_bk, s_bn, BM=64, BN=64, BK=32, PRECISION="{precision}")
        return C
'''

MEAN_TWICE = '''import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

source = r"""
#include <torch/extension.h>
__global__ void sum_kernel(const float* x, float* out, int n) {
    __shared__ float part[256];
    float s = 0.0f;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) s += x[i];
    part[threadIdx.x] = s;
    __syncthreads();
    for (int w = 128; w > 0; w >>= 1) {
        if (threadIdx.x < w) part[threadIdx.x] += part[threadIdx.x + w];
        __syncthreads();
    }
    if (threadIdx.x == 0) atomicAdd(out, part[0]);
}
torch::Tensor mean_cuda(torch::Tensor x) {
    auto out = torch::zeros({}, x.options());
    int n = x.numel();
    sum_kernel<<<64, 256>>>(x.data_ptr<float>(), out.data_ptr<float>(), n);
    return out / (n / 2);  // wrong: twice the mean
}
"""
mean = load_inline(name="mean_twice", cpp_sources="torch::Tensor mean_cuda(torch::Tensor x);", cuda_sources=source,
                   functions=["mean_cuda"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self):
        super(ModelNew, self).__init__()

    def forward(self, A):
        return mean.mean_cuda(A.contiguous())
'''


def cuda(name: str, kernel: str, **fields) -> str:
    body = kernel
    for key, value in {"name": name, **fields}.items():
        body = body.replace("{" + key + "}", str(value))
    return CUDA_HEAD.replace("{kernel}", body).replace("{name}", name)


# (problem file, solution name, source, expected status under truth, expected under kernelbench or None: either)
def cases() -> list[tuple[str, str, str, str, str | None]]:
    square, standard, transposed = PROBLEMS
    rows = []
    for problem, b_t in ((square, 0), (standard, 0), (transposed, 1)):
        tag = problem.split("_")[0]
        rows.append((problem, f"naive_loop_{tag}", cuda(f"naive_{tag}", NAIVE, b_transposed=b_t, drop=0), "correct", None))
        rows.append((problem, f"triton_tiled_ieee_{tag}", TRITON.replace("{b_transposed}", str(bool(b_t)))
                     .replace("{precision}", "ieee"), "correct", None))
        rows.append((problem, f"triton_tiled_tf32_{tag}", TRITON.replace("{b_transposed}", str(bool(b_t)))
                     .replace("{precision}", "tf32"), "incorrect", "incorrect"))
        rows.append((problem, f"naive_loop_drops_a_term_{tag}", cuda(f"drop_{tag}", NAIVE, b_transposed=b_t, drop=1),
                     "incorrect", "incorrect"))
        if not b_t:
            rows.append((problem, f"shared_memory_tiled_{tag}", cuda(f"tiled_{tag}", TILED), "correct", None))
    rows.append((MEAN_PROBLEM[0], "mean_twice", MEAN_TWICE, "incorrect", "incorrect"))
    return rows


def write_problems(root: Path) -> None:
    level = root / "level1"
    level.mkdir(parents=True, exist_ok=True)
    for file, (sizes, expression, inputs) in PROBLEMS.items():
        (level / file).write_text(PROBLEM_TEMPLATE.format(sizes=sizes, expression=expression, inputs=inputs))
    file, sizes, expression, inputs = MEAN_PROBLEM
    (level / file).write_text(PROBLEM_TEMPLATE.format(sizes=sizes, expression=expression, inputs=inputs)
                              .replace("A: torch.Tensor, B: torch.Tensor = None", "A: torch.Tensor"))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--trials", type=int, default=5)
    parser.add_argument("--size", default="default", help="default (KernelBench's sizes); small for a CPU smoke run")
    parser.add_argument("--only", nargs="*", help="solutions whose name contains one of these words")
    parser.add_argument("--out", type=Path, default=Path(os.environ.get("OUT", ".")) / "kb_matmul.json")
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="kernelbench_"))
    write_problems(root)
    rows, failures = [], 0
    chosen = [case for case in cases() if not args.only or any(word in case[1] for word in args.only)]
    (root / "solutions").mkdir()
    for _, name, source, _, _ in chosen:
        (root / "solutions" / f"{name}.py").write_text(source)
    with ThreadPoolExecutor(8) as pool:  # every CUDA build at once (each its own process), not one per evaluation
        list(pool.map(lambda case: build(root / "solutions" / f"{case[1]}.py", args.device), chosen))
    print(f"{'problem':40s} {'solution':32s} {'criterion':11s} {'status':10s} {'share':>8s} {'ref err':>9s}  expected")
    for problem, name, source, want_truth, want_kb in chosen:
        path = root / "solutions" / f"{name}.py"
        for criterion, want in (("truth", want_truth), ("kernelbench", want_kb)):
            started = time.perf_counter()
            verdict = kbench.evaluate(root / "level1" / problem, path, args.device, size=args.size, trials=args.trials,
                                      measure_time=False, policy="lenient", correctness=criterion)
            truth = verdict.truth or {}
            held = want is None or verdict.status == want
            failures += not held
            share, ref = truth.get("share"), truth.get("reference_error")
            shown_share = "-" if share is None else f"{share:.3f}"
            shown_ref = "-" if ref is None else f"{ref:.2e}"
            print(f"{problem:40s} {name:32s} {criterion:11s} {verdict.status:10s} {shown_share:>8s} {shown_ref:>9s}  "
                  f"{want or 'either'}{'' if held else '  <-- NOT AS EXPECTED'}", flush=True)
            rows.append({"problem": problem, "solution": name, "criterion": criterion, "status": verdict.status,
                         "reason": verdict.reason, "expected": want, "held": held, "truth": truth,
                         "kernelbench_correct": verdict.kernelbench_correct,
                         "wall_s": round(time.perf_counter() - started, 1)})
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"device": args.device, "trials": args.trials, "rows": rows}, indent=1))
    print(f"{len(rows) - failures} of {len(rows)} as expected; JSON in {args.out}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
