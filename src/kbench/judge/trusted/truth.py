"""The float64 truth of a checked call: the problem's Model in float64 on the call's inputs.

The reference worker judges a candidate's floating-point output against this
truth (kbench.judge.trusted.compare, the ``truth`` criterion) rather than against its
own float32 output alone, whose summation order is only one of the honest ones.
``Truth`` keeps, per reference worker and per model it builds, a float64 twin
of the model: the problem's ``Model`` built by the worker's own ``make_model``
under the same init seed (so in the judged dtype first: a bfloat16 variant's
truth starts from the very same rounded weights), then every floating-point
parameter and buffer cast to float64 (complex to complex128). Each call's
inputs are those the reference drew for the seed, floating point cast to
float64 (integers kept), and ``forward`` runs with float64 as the default dtype
(constants made inside it too).

Where the truth would cost too much it is not computed, and the verdict says
why (``TruthUnavailable``; the reference's output and the problem's tolerance
judge alone, as KernelBench does): when the float64 inputs, output and
parameters, with room for what forward makes on the way (``HEADROOM``), do not
fit in what the device has free (on the host: in half of what is available);
when the device runs out of memory on the way; when the model does not run in
float64 (a dtype written into its code). Its cost is measured by
benchmarks/truth_cost.py (docs/correctness.md). Memory: the float64 parameters stay
on the device between checks when they are small (``KEEP_ON_DEVICE_BYTES``),
else they wait on the host and are moved for each check; every check's
temporaries are handed back (``release``) before the next candidate call.
"""

from __future__ import annotations

import itertools
from typing import Any, Callable

import psutil
import torch

from kbench.judge.trusted.compare import TruthUnavailable, leaves

HEADROOM = 1.5  # free memory needed, in times the float64 inputs, output and parameters
KEEP_ON_DEVICE_BYTES = 1 << 30  # float64 parameters up to this size stay on the device between checks


class Truth:
    """The float64 twin of a reference worker's model, made at the first check and kept."""

    def __init__(self, make_model: Callable[[], torch.nn.Module], device: torch.device):
        self.make_model = make_model
        self.device = device
        self.model: torch.nn.Module | None = None
        self.failed: str | None = None  # the model does not run in float64: said once, kept
        self.parameter_bytes = 0

    def output(self, args: list[Any], expected: Any = None) -> Any:
        """The float64 output for ``args`` (the call's inputs as drawn, in the judged dtype;
        converted one at a time, each dropped once converted), or TruthUnavailable.
        ``expected`` (the reference's output) sizes the float64 output ahead."""
        if self.failed:
            raise TruthUnavailable(self.failed)
        model = self._model()
        needed = HEADROOM * (self.parameter_bytes + _float64_bytes(args) + _float64_bytes(expected))
        free = _free_bytes(self.device)
        if needed > free:
            raise TruthUnavailable(f"the float64 model needs about {needed / 2**30:.2f} GiB, "
                                   f"{free / 2**30:.2f} GiB free on {self.device}")
        ran_out = False
        try:
            model.to(self.device)
            for i, x in enumerate(args):
                args[i] = to_float64(x)
                del x
            previous = torch.get_default_dtype()
            torch.set_default_dtype(torch.float64)
            try:
                with torch.no_grad():
                    out = model(*args)
            finally:
                torch.set_default_dtype(previous)
            if self.device.type == "cuda":
                torch.cuda.synchronize(self.device)
            return out
        except (torch.OutOfMemoryError, MemoryError):
            ran_out = True
        except Exception as exc:  # noqa: BLE001 - the problem's own code, in a dtype it was not written for
            self.failed = f"the model does not run in float64 ({type(exc).__name__}: {str(exc)[:300]})"
            raise TruthUnavailable(self.failed) from None
        finally:
            args.clear()
            if self.parameter_bytes > KEEP_ON_DEVICE_BYTES:
                model.to("cpu")
        if ran_out:  # outside the except block: its traceback no longer holds what ran out
            self.release()
            raise TruthUnavailable(f"{self.device} ran out of memory computing the float64 truth")

    def _model(self) -> torch.nn.Module:
        if self.model is None:
            try:
                model = self.make_model()
                model._apply(_float64_tensor)
            except (torch.OutOfMemoryError, MemoryError):
                raise TruthUnavailable(f"{self.device} ran out of memory making the float64 model") from None
            except Exception as exc:  # noqa: BLE001 - as in ``output``
                self.failed = f"the model cannot be made in float64 ({type(exc).__name__}: {str(exc)[:300]})"
                raise TruthUnavailable(self.failed) from None
            self.parameter_bytes = sum(t.numel() * t.element_size()
                                       for t in itertools.chain(model.parameters(), model.buffers()))
            if self.parameter_bytes > KEEP_ON_DEVICE_BYTES:
                model.to("cpu")
            self.model = model
        return self.model

    def release(self) -> None:
        """A check's temporaries handed back to the device (the model itself is kept)."""
        if self.device.type == "cuda":
            torch.cuda.synchronize(self.device)
            torch.cuda.empty_cache()

    def close(self) -> None:
        """The float64 model dropped too (a new model, at another size, gets a new Truth)."""
        self.model = None
        self.release()


def _float64_tensor(t: torch.Tensor) -> torch.Tensor:
    if t.is_complex():
        return t.to(torch.complex128)
    return t.to(torch.float64) if t.is_floating_point() else t


def to_float64(x: Any) -> Any:
    """A call's argument for the float64 model: floating point to float64, complex to complex128,
    anything else (integers, booleans, Python values) as it is."""
    return _float64_tensor(x) if isinstance(x, torch.Tensor) else x


def _float64_bytes(obj: Any) -> int:
    """What the tensors in ``obj`` take once floating point is float64 (complex128)."""
    total = 0
    for _, leaf in leaves(obj)[0] if obj is not None else []:
        if isinstance(leaf, torch.Tensor):
            width = 16 if leaf.is_complex() else 8 if leaf.is_floating_point() else leaf.element_size()
            total += leaf.numel() * width
    return total


def _free_bytes(device: torch.device) -> int:
    """Memory the truth may use: the device's free memory and what its allocator holds unused;
    on the host, half of the available memory, and no more than keeps the worker under the judge's
    default memory limit (half the machine: kbench.judge.processes.process), which would kill it, and the
    problem would take the blame."""
    if device.type == "cuda":
        free, _ = torch.cuda.mem_get_info(device)
        return free + torch.cuda.memory_reserved(device) - torch.cuda.memory_allocated(device)
    memory = psutil.virtual_memory()
    return max(0, min(memory.available // 2, memory.total // 2 - psutil.Process().memory_info().rss))
