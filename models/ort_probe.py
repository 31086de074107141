"""Which ONNX Runtime is installed, and whether its CUDA provider can load, asked quietly.

Two reasons this exists:

- `onnxruntime` and `onnxruntime-gpu` both install the module `onnxruntime`. With both
  installed the files of whichever came last win (usually the CPU build), CUDA is never
  offered, and uninstalling one breaks the other. `onnxruntime_distributions()` names every
  distribution that provides the module, so doctor can name a double install and its fix.
- `onnxruntime-gpu` lists `CUDAExecutionProvider` on any machine, but a session that asks
  for it without the NVIDIA driver or the CUDA/cuDNN libraries prints
  `[E:onnxruntime ...] Failed to load library libonnxruntime_providers_cuda.so` and falls
  back to the CPU. `cuda_probe()` checks the driver, a device and the libraries first
  (with `onnxruntime.preload_dlls()`, silenced, where it exists), so CUDA is requested only
  when it can load and a CPU-only machine prints nothing.
"""

from __future__ import annotations

import contextlib
import ctypes
import io
import platform
import warnings
from dataclasses import dataclass
from functools import lru_cache

CUDA_PROVIDER = "CUDAExecutionProvider"


def onnxruntime_distributions() -> list[str]:
    """Installed distributions that provide the `onnxruntime` module, as "name version"."""
    from importlib import metadata

    names = sorted(set(metadata.packages_distributions().get("onnxruntime", [])), key=str.lower)
    out = []
    for name in names:
        try:
            out.append(f"{name} {metadata.version(name)}")
        except metadata.PackageNotFoundError:
            out.append(name)
    return out


def expected_distribution() -> str:
    """The one distribution scim-edge's own dependencies choose on this platform."""
    linux_x86 = platform.system() == "Linux" and platform.machine() in ("x86_64", "AMD64")
    return "onnxruntime-gpu" if linux_x86 else "onnxruntime"


def double_install_fix(dists: list[str]) -> str:
    """The commands that leave exactly one ONNX Runtime (both must go first: they share files)."""
    names = " ".join(d.split()[0] for d in dists)
    return f"pip uninstall -y {names} && pip install {expected_distribution()}"


@dataclass(frozen=True)
class CudaProbe:
    usable: bool
    reason: str


def _cuda_major() -> int | None:
    try:
        from onnxruntime.capi import build_and_package_info as info
    except Exception:  # noqa: BLE001 - a CPU build may lack the field
        return None
    version = str(getattr(info, "cuda_version", "") or "")
    head = version.split(".")[0]
    return int(head) if head.isdigit() else None


def _device_count() -> tuple[int, str]:
    """CUDA devices the driver sees (0 and why, when there is no driver or no device)."""
    try:
        cuda = ctypes.CDLL("libcuda.so.1")
    except OSError:
        return 0, "no NVIDIA driver (libcuda.so.1 not found)"
    if cuda.cuInit(0) != 0:
        return 0, "the NVIDIA driver found no usable GPU (cuInit failed)"
    count = ctypes.c_int(0)
    if cuda.cuDeviceGetCount(ctypes.byref(count)) != 0 or count.value < 1:
        return 0, "no CUDA device visible"
    return count.value, ""


def _preload_quietly(ort: object) -> None:
    """`onnxruntime.preload_dlls()` loads the CUDA/cuDNN libraries pip's nvidia packages
    bring; it prints what it cannot load, which a CPU-only machine must not see."""
    preload = getattr(ort, "preload_dlls", None)
    if preload is None:
        return
    sink = io.StringIO()
    with (
        contextlib.redirect_stdout(sink),
        contextlib.redirect_stderr(sink),
        warnings.catch_warnings(),
    ):
        warnings.simplefilter("ignore")
        with contextlib.suppress(Exception):
            preload()


def _missing_libraries(major: int) -> list[str]:
    """The CUDA provider's libraries (by soname) that the dynamic loader cannot find."""
    libs = [
        f"libcudart.so.{major}",
        f"libcublasLt.so.{major}",
        f"libcublas.so.{major}",
        "libcurand.so.10",
        "libcudnn.so.9",
    ]
    missing = []
    for lib in libs:
        try:
            ctypes.CDLL(lib)
        except OSError:
            missing.append(lib)
    return missing


@lru_cache(maxsize=1)
def cuda_probe() -> CudaProbe:
    """Whether a session may ask for CUDA without ONNX Runtime printing load errors."""
    try:
        import onnxruntime as ort
    except Exception as e:  # noqa: BLE001
        return CudaProbe(False, f"onnxruntime cannot be imported: {type(e).__name__}")
    if CUDA_PROVIDER not in ort.get_available_providers():
        return CudaProbe(False, "this ONNX Runtime build has no CUDA provider")
    if platform.system() != "Linux":
        return CudaProbe(True, "CUDA provider present")
    count, why = _device_count()
    if not count:
        return CudaProbe(False, why)
    _preload_quietly(ort)
    major = _cuda_major()
    if major is not None and (missing := _missing_libraries(major)):
        return CudaProbe(
            False,
            f"CUDA {major} libraries not found: {', '.join(missing)} "
            "(pip install 'scim-edge[gpu]' brings them)",
        )
    return CudaProbe(True, f"{count} GPU(s), CUDA libraries load")


def cuda_usable() -> bool:
    return cuda_probe().usable
