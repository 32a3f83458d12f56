"""Load an optimized BLAS into the process before MLX, so float32 on the CPU runs at the machine's speed.

MLX's Linux CPU wheel links a reference BLAS. A library loaded with ``RTLD_GLOBAL`` before
``mlx.core`` is first imported provides ``cblas_sgemm`` in its place (no ``LD_PRELOAD``, no
re-exec). Why this order of libraries and these thread counts: docs/cpu.md.
"""

from __future__ import annotations

import ctypes
import logging
import os
import platform
import site
import sys
from dataclasses import dataclass
from pathlib import Path

from mcp_chat_tui.core.paths import package_path

BLAS_ENV = "MCP_CHAT_TUI_BLAS"  # "none" (or "off"): MLX's own BLAS; a path: that library; else the fastest found
OFF = ("none", "off", "0", "no", "false")
BUNDLED = "MLX's reference BLAS"
INSTALL_HINT = (
    "mcp-chat-tui: no optimized BLAS found, so the model runs several times slower on this CPU: "
    "install one with `sudo apt install libopenblas0-pthread` (Fedora: `dnf install openblas`, "
    "Arch: `pacman -S openblas`) or `pip install mkl` (the `[mkl]` extra); set MCP_CHAT_TUI_BLAS=none to hide this line"
)

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class BlasChoice:
    """The BLAS MLX computes with in this process."""

    name: str  # "OpenBLAS", "MKL", or BUNDLED
    path: str | None = None  # the library loaded; None for MLX's own
    reason: str = ""  # why MLX's own is used ("" when an optimized one is)

    @property
    def hint(self) -> str | None:
        """The one line to print when nothing was found to load (None when there is nothing to say)."""
        return INSTALL_HINT if self.reason == "none found" else None

    def describe(self) -> str:
        """``OpenBLAS (/usr/lib/.../libblas.so.3)`` or ``MLX's reference BLAS (turned off by ...)``."""
        where = self.path or self.reason
        return f"{self.name} ({where})" if where else self.name


_loaded: BlasChoice | None = None


def load_blas(setting: str | None = None) -> BlasChoice:
    """Load the fastest BLAS found, once per process and before ``mlx.core``; call it first.

    Args:
        setting: ``--blas``'s value (``none``, a path, ``auto``); else ``MCP_CHAT_TUI_BLAS``.
    Returns:
        What MLX computes with. Later calls return the first call's answer.
    """
    global _loaded
    if _loaded is None:
        _loaded = _choose(setting if setting is not None else os.environ.get(BLAS_ENV, "auto"))
        log.info("BLAS: %s", _loaded.describe())
    return _loaded


def blas_in_use() -> BlasChoice | None:
    """What ``load_blas`` chose, or None before it ran."""
    return _loaded


def fast_path_hint(model: Path) -> str:
    """``INSTALL_HINT`` when the model at ``model`` is a real one (not the bundled demo, which needs no
    fast BLAS) and MLX computes on the CPU with its reference BLAS because none was found; else ""."""
    choice = blas_in_use()
    if choice is None or choice.hint is None or model.resolve() == package_path("demo", "model").resolve():
        return ""
    import mlx.core as mx  # loaded by now: the model is

    return choice.hint if mx.default_device().type == mx.DeviceType.cpu else ""


def _choose(setting: str) -> BlasChoice:
    setting = setting.strip()
    if sys.platform != "linux":
        return BlasChoice("the platform's BLAS", reason="MLX uses Accelerate" if sys.platform == "darwin" else "")
    if setting.lower() in OFF:
        return BlasChoice(BUNDLED, reason=f"turned off by {BLAS_ENV}=none or --blas none")
    if "mlx.core" in sys.modules:
        return BlasChoice(BUNDLED, reason="mlx.core was imported before the BLAS could be loaded")
    if setting and setting.lower() != "auto":
        path = Path(setting).expanduser()
        if _load(path):
            return BlasChoice(library_name(path), str(path))
        return BlasChoice(BUNDLED, reason=f"{setting} cannot be loaded or has no cblas_sgemm")
    for name, path in candidates():
        if path.exists() and _load(path, name):
            return BlasChoice(name, str(path))
    return BlasChoice(BUNDLED, reason="none found")


SYSTEM_ROOT = Path("/")  # where the system's libraries are looked for (tests point it elsewhere)


def candidates() -> list[tuple[str, Path]]:
    """Libraries to try, fastest first: the system's OpenBLAS (Debian and Ubuntu, Fedora, openSUSE,
    Arch), then MKL from pip (the ``mkl`` extra)."""
    arch = f"{platform.machine()}-linux-gnu"
    found = [
        ("OpenBLAS", SYSTEM_ROOT / path)
        for path in (
            f"usr/lib/{arch}/openblas-pthread/libblas.so.3",  # Debian, Ubuntu: libopenblas0-pthread
            f"usr/lib/{arch}/openblas-openmp/libblas.so.3",
            f"usr/lib/{arch}/libopenblas.so.0",
            "usr/lib64/libopenblasp.so.0",  # Fedora: openblas-threads
            "usr/lib64/libopenblas_pthreads.so.0",  # openSUSE: libopenblas_pthreads0
            "usr/lib64/libopenblas.so.0",
            "usr/lib/libopenblas.so.0",  # Arch: openblas
        )
    ]
    return found + [("MKL", folder / f"libmkl_rt.so.{v}") for folder in pip_lib_folders() for v in (2, 3)]


def library_name(path: Path) -> str:
    """What a user calls the library at ``path``."""
    text = str(path).lower()
    if "mkl" in text:
        return "MKL"
    if "openblas" in text:
        return "OpenBLAS"
    if "blis" in text:
        return "BLIS"
    return path.name


def pip_lib_folders() -> list[Path]:
    """Where pip puts a wheel's shared libraries (the ``mkl`` package's ``lib/``): this environment, the user's."""
    folders = [Path(sys.prefix) / "lib", Path(sys.base_prefix) / "lib"]
    if site.ENABLE_USER_SITE and site.USER_BASE:
        folders.append(Path(site.USER_BASE) / "lib")
    return list(dict.fromkeys(folders))


def blas_threads() -> int:
    """Threads the BLAS may use: every core this process may run on but one, which is left to the MLX
    thread's Python work and the app's own thread (measured on 2 cores: docs/cpu.md)."""
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cores = os.cpu_count() or 1
    return max(1, cores - 1)


def _set_threads(name: str) -> None:
    """Thread settings the library reads when it loads; a value the user set is kept."""
    threads = str(blas_threads())
    if name == "MKL":
        os.environ.setdefault("MKL_NUM_THREADS", threads)
        # one thread needs no OpenMP at all; more use the Intel OpenMP that pip's mkl brings along
        os.environ.setdefault("MKL_THREADING_LAYER", "SEQUENTIAL" if threads == "1" else "INTEL")
    else:
        os.environ.setdefault("OPENBLAS_NUM_THREADS", threads)


def _load(path: Path, name: str | None = None) -> bool:
    """Load ``path`` into the process's global symbols; True when it provides ``cblas_sgemm``."""
    _set_threads(name or library_name(path))
    try:
        library = ctypes.CDLL(str(path), mode=ctypes.RTLD_GLOBAL)
    except OSError as exc:
        log.info("cannot load %s: %s", path, exc)
        return False
    return hasattr(library, "cblas_sgemm")
