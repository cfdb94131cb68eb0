"""Memory two worker processes share, one writing and the other reading: each call's inputs go
from the trusted side to the candidate's process, and its output back, through these.

The trusted side (the reference worker) draws a call's inputs and writes them into an
``Outbox`` of its own; the candidate's process maps it (an ``Inbox``) and computes on views
of it; the candidate writes its output into an ``Outbox`` of its own, which the reference
maps and copies out of into its own memory. Nothing a decision rests on is read inside the
candidate's process (docs/trust.md).

A buffer is made once and kept; when a call needs more room a larger one replaces it, and
only then does a descriptor travel (over the worker's handles socket, ``vmm.send_fd``): on
a GPU an allocation of CUDA's virtual memory API (kbench.judge.exchange.vmm), on a CPU a ``memfd``.
Either side may write the memory at any time; that is why the reader copies what it needs
at a moment the judge chooses, and the writer's later writes only spoil its own answer.
"""

from __future__ import annotations

import fcntl
import mmap
import os
import socket
from typing import Any

import torch

from kbench.judge.exchange import vmm

GROWTH = 1.25  # a buffer that must grow takes this much more than asked, so that sizes that wander reuse it


class Outbox:
    """A buffer this process writes and another maps: ``reserve`` room before each use,
    ``share`` it with the reader (its descriptor goes only when the buffer is new to it)."""

    def __init__(self, device: torch.device):
        self.device = device
        self.capacity = 0
        self._buffer: vmm.ExportedBuffer | _SharedFile | None = None
        self._readers: set[str] = set()  # the readers that hold the current buffer

    def reserve(self, nbytes: int) -> None:
        """Room for ``nbytes``: the buffer kept, or a larger one in its place."""
        nbytes = max(int(nbytes), 1)
        if nbytes <= self.capacity:
            return
        self.close()
        capacity = int(nbytes * GROWTH)
        if self.device.type == "cuda":
            self._buffer = vmm.ExportedBuffer(capacity, self.device.index or 0)
        else:
            self._buffer = _SharedFile(capacity)
        self.capacity, self._readers = capacity, set()

    def share(self, channel: socket.socket, reader: str = "reader") -> bool:
        """Send the buffer's descriptor over ``channel`` unless ``reader`` holds it; True when sent."""
        if reader in self._readers or self._buffer is None:
            return False
        fd = self._buffer.export()
        try:
            vmm.send_fd(channel, fd)
        finally:
            os.close(fd)
        self._readers.add(reader)
        return True

    def tensor(self, nbytes: int) -> torch.Tensor:
        """Its first ``nbytes`` as uint8."""
        if self._buffer is None or nbytes > self.capacity:
            raise ValueError(f"no room reserved for {nbytes} bytes")
        return self._buffer.tensor()[:nbytes]

    def close(self) -> None:
        if self._buffer is not None:
            self._buffer.close()
            self._buffer, self.capacity = None, 0


class Inbox:
    """Another process's ``Outbox``, mapped here; ``adopt`` a new one when its descriptor comes."""

    def __init__(self, device: torch.device):
        self.device = device
        self.capacity = 0
        self._mapping: vmm.ImportedBuffer | _SharedFile | None = None

    def adopt(self, channel: socket.socket, nbytes: Any, timeout: float = 10.0) -> None:
        """Map the buffer whose descriptor waits on ``channel``: its ``nbytes`` (the writer's
        capacity; ValueError when no descriptor came, or it holds less)."""
        fd = vmm.receive_fd(channel, timeout=timeout)
        if fd is None:
            raise ValueError("a shared buffer's descriptor never came")
        try:
            self.close()
            if not isinstance(nbytes, int) or isinstance(nbytes, bool) or not 0 < nbytes < 1 << 48:
                raise ValueError(f"a shared buffer of {nbytes!r} bytes")
            if self.device.type == "cuda":
                self._mapping = vmm.ImportedBuffer(fd, nbytes, self.device.index or 0)
            else:
                self._mapping = _SharedFile(nbytes, fd)
            self.capacity = nbytes
        finally:
            os.close(fd)

    def tensor(self, nbytes: int) -> torch.Tensor:
        if self._mapping is None or nbytes > self.capacity:
            raise ValueError(f"{nbytes} bytes were announced in a shared buffer of {self.capacity}")
        return self._mapping.tensor()[:nbytes]

    def close(self) -> None:
        if self._mapping is not None:
            self._mapping.close()
            self._mapping, self.capacity = None, 0


class _SharedFile:
    """Host memory shared by descriptor: a new ``memfd`` of ``nbytes``, or the one ``fd`` names
    (which must hold at least ``nbytes``), mapped here."""

    def __init__(self, nbytes: int, fd: int | None = None):
        if fd is None:
            self._fd = os.memfd_create("kbench-exchange", os.MFD_CLOEXEC | os.MFD_ALLOW_SEALING)
            os.ftruncate(self._fd, nbytes)
            fcntl.fcntl(self._fd, fcntl.F_ADD_SEALS, fcntl.F_SEAL_SHRINK | fcntl.F_SEAL_SEAL)
        else:
            # A file the writer could shrink would fault the reader's every access past its end (SIGBUS).
            if not fcntl.fcntl(fd, fcntl.F_GET_SEALS) & fcntl.F_SEAL_SHRINK:
                raise ValueError("a shared buffer that is not sealed against shrinking")
            if os.fstat(fd).st_size < nbytes:
                raise ValueError(f"a shared buffer smaller than the {nbytes} bytes announced")
            self._fd = os.dup(fd)
        self._map = mmap.mmap(self._fd, nbytes)
        self._tensor = torch.frombuffer(self._map, dtype=torch.uint8)

    def tensor(self) -> torch.Tensor:
        return self._tensor

    def export(self) -> int:
        return os.dup(self._fd)

    def close(self) -> None:
        # The mapping goes with the last tensor that views it (mmap refuses to close under a view).
        self._tensor = None
        os.close(self._fd)
