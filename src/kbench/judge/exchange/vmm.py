"""Device memory one process hands another by file descriptor (CUDA's virtual memory API).

A checked call's output goes from the candidate's process to the reference's
without leaving the GPU: the candidate's worker copies it into a buffer made
with ``cuMemCreate`` and exportable as a POSIX file descriptor, and the
descriptor travels over a Unix socket (``SCM_RIGHTS``) to the reference, which
maps the same physical memory and copies what it needs into its own. Legacy
CUDA IPC handles (``cudaIpcGetMemHandle``, what ``torch.multiprocessing``
uses) do not cross PID namespaces, and every candidate runs in one of its own
(kbench.judge.processes.sandbox); a descriptor is a kernel object and does.

Nothing the importing side maps is trusted: the reference copies the bytes
into its own memory first and checks them there (kbench.judge.exchange.outputs), so a
candidate that keeps writing into the buffer only spoils its own answer; the
mapped size is the one the reference asked for, and a descriptor that is not
such an allocation, or smaller, fails to import or map (a CudaError).
The driver is called through ctypes: nothing to build, and no CUDA Python
package needed on the GPU machine.
"""

from __future__ import annotations

import ctypes
import functools
import os
import socket
from contextlib import contextmanager
from typing import Iterator

import torch

POSIX_FD = 1  # CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR
PINNED = 1  # CU_MEM_ALLOCATION_TYPE_PINNED
ON_DEVICE = 1  # CU_MEM_LOCATION_TYPE_DEVICE
READ_WRITE = 3  # CU_MEM_ACCESS_FLAGS_PROT_READWRITE


class CudaError(RuntimeError):
    """A driver call failed."""


class _Location(ctypes.Structure):
    _fields_ = [("type", ctypes.c_int), ("id", ctypes.c_int)]


class _AllocFlags(ctypes.Structure):
    _fields_ = [("compressionType", ctypes.c_ubyte), ("gpuDirectRDMACapable", ctypes.c_ubyte),
                ("usage", ctypes.c_ushort), ("reserved", ctypes.c_ubyte * 4)]


class _AllocationProp(ctypes.Structure):
    _fields_ = [("type", ctypes.c_int), ("requestedHandleTypes", ctypes.c_int), ("location", _Location),
                ("win32HandleMetaData", ctypes.c_void_p), ("allocFlags", _AllocFlags)]


class _AccessDesc(ctypes.Structure):
    _fields_ = [("location", _Location), ("flags", ctypes.c_int)]


_driver: ctypes.CDLL | None = None


def _cuda() -> ctypes.CDLL:
    global _driver
    if _driver is None:
        _driver = ctypes.CDLL("libcuda.so.1")
    return _driver


def _check(result: int, what: str) -> None:
    if result != 0:
        message = ctypes.c_char_p()
        _cuda().cuGetErrorString(result, ctypes.byref(message))
        text = message.value.decode() if message.value else f"error {result}"
        raise CudaError(f"{what}: {text}")


def _prop(device: int) -> _AllocationProp:
    return _AllocationProp(type=PINNED, requestedHandleTypes=POSIX_FD, location=_Location(ON_DEVICE, device))


@functools.cache
def _granularity(device: int) -> int:
    size = ctypes.c_size_t()
    prop = _prop(device)
    _check(_cuda().cuMemGetAllocationGranularity(ctypes.byref(size), ctypes.byref(prop), 0), "granularity")
    return size.value


def _round_up(nbytes: int, device: int) -> int:
    grain = _granularity(device)
    return max(grain, -(-nbytes // grain) * grain)


class _Mapping:
    """A physical allocation (``handle``, which it owns from now on: released on
    ``close``, or at once when it cannot be mapped) mapped into this process,
    readable and writable on ``device``."""

    def __init__(self, handle: int, size: int, device: int):
        self.handle, self.size, self.device = handle, size, device
        self.address = ctypes.c_uint64()
        driver = _cuda()
        try:
            _check(driver.cuMemAddressReserve(ctypes.byref(self.address), ctypes.c_size_t(size), ctypes.c_size_t(0),
                                              ctypes.c_uint64(0), ctypes.c_ulonglong(0)), "reserving addresses")
            _check(driver.cuMemMap(self.address, ctypes.c_size_t(size), ctypes.c_size_t(0),
                                   ctypes.c_ulonglong(handle), ctypes.c_ulonglong(0)), "mapping")
            access = _AccessDesc(_Location(ON_DEVICE, device), READ_WRITE)
            _check(driver.cuMemSetAccess(self.address, ctypes.c_size_t(size), ctypes.byref(access),
                                         ctypes.c_size_t(1)), "setting access")
        except CudaError:
            if self.address.value:
                driver.cuMemUnmap(self.address, ctypes.c_size_t(size))
                driver.cuMemAddressFree(self.address, ctypes.c_size_t(size))
            driver.cuMemRelease(ctypes.c_ulonglong(handle))
            raise

    def tensor(self, nbytes: int) -> torch.Tensor:
        """The first ``nbytes`` as a uint8 tensor on the device (it owns nothing: keep the mapping)."""
        return torch.as_tensor(_DeviceArray(self.address.value, nbytes), device=f"cuda:{self.device}")

    def close(self) -> None:
        torch.cuda.synchronize(self.device)  # nothing may still read or write it
        driver = _cuda()
        driver.cuMemUnmap(self.address, ctypes.c_size_t(self.size))
        driver.cuMemAddressFree(self.address, ctypes.c_size_t(self.size))
        driver.cuMemRelease(ctypes.c_ulonglong(self.handle))


class _DeviceArray:
    """A raw device range in the ``__cuda_array_interface__`` torch.as_tensor reads."""

    def __init__(self, address: int, nbytes: int):
        self.__cuda_array_interface__ = {"shape": (nbytes,), "typestr": "|u1", "data": (address, False),
                                         "version": 3, "strides": None}


class ExportedBuffer:
    """A buffer of at least ``nbytes`` on ``device``, mapped here, exportable as a descriptor."""

    def __init__(self, nbytes: int, device: int):
        torch.cuda.init()
        size = _round_up(nbytes, device)
        handle = ctypes.c_ulonglong()
        prop = _prop(device)
        _check(_cuda().cuMemCreate(ctypes.byref(handle), ctypes.c_size_t(size), ctypes.byref(prop),
                                   ctypes.c_ulonglong(0)), "allocating a shareable buffer")
        self._mapping = _Mapping(handle.value, size, device)
        self.nbytes = nbytes

    def tensor(self) -> torch.Tensor:
        return self._mapping.tensor(self.nbytes)

    def export(self) -> int:
        """A new file descriptor for the allocation (the caller closes it)."""
        fd = ctypes.c_int(-1)
        _check(_cuda().cuMemExportToShareableHandle(ctypes.byref(fd), ctypes.c_ulonglong(self._mapping.handle),
                                                    POSIX_FD, ctypes.c_ulonglong(0)), "exporting the buffer")
        return fd.value

    def close(self) -> None:
        self._mapping.close()


class ImportedBuffer:
    """The allocation behind ``fd`` (another process's), mapped here until ``close``: its first
    ``nbytes`` as a uint8 tensor. The caller keeps and closes ``fd``."""

    def __init__(self, fd: int, nbytes: int, device: int):
        torch.cuda.init()
        handle = ctypes.c_ulonglong()
        _check(_cuda().cuMemImportFromShareableHandle(ctypes.byref(handle), ctypes.c_void_p(fd), POSIX_FD),
               "importing the buffer")
        self._mapping = _Mapping(handle.value, _round_up(nbytes, device), device)
        self.nbytes = nbytes

    def tensor(self) -> torch.Tensor:
        return self._mapping.tensor(self.nbytes)

    def close(self) -> None:
        self._mapping.close()


@contextmanager
def imported(fd: int, nbytes: int, device: int) -> Iterator[torch.Tensor]:
    """An ``ImportedBuffer``'s tensor for the duration; unmapped and released afterwards."""
    buffer = ImportedBuffer(fd, nbytes, device)
    try:
        yield buffer.tensor()
    finally:
        buffer.close()


def available(device: torch.device) -> bool:
    """Whether shareable buffers can be made on ``device`` here (a CUDA device, a driver
    that supports descriptors); if not, outputs travel through files."""
    if device.type != "cuda":
        return False
    try:
        buffer = ExportedBuffer(1, device.index or 0)
        try:
            os.close(buffer.export())
        finally:
            buffer.close()
    except (OSError, CudaError, AttributeError):
        return False
    return True


def send_fd(channel: socket.socket, fd: int) -> None:
    socket.send_fds(channel, [b"f"], [fd])


def receive_fd(channel: socket.socket, timeout: float | None = None) -> int | None:
    """One descriptor sent over ``channel``, or None when none came within ``timeout``
    (any others sent with it are closed)."""
    channel.settimeout(timeout)
    try:
        _, fds, _, _ = socket.recv_fds(channel, 1, 4)
    except OSError:  # a timeout, or a peer gone
        return None
    for extra in fds[1:]:
        os.close(extra)
    return fds[0] if fds else None
