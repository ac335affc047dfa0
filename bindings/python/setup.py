"""Builds exactly's extension module with the project's CMake build.

The package metadata is in pyproject.toml; this file only teaches
setuptools to build ``exactly._exactly`` by configuring the whole project
(the SDK, the bundled broker and the bindings; no tests, benchmarks or
examples) and building the ``_exactly`` target, then copying the module
into the wheel. It needs the repository around it (``bindings/python`` is
two levels below the project root) and the Debian build packages that
``scripts/setup.sh`` installs.

Two ways to install (README.md says more):

    python3 -m venv /tmp/venv                   # build isolation: pip takes
    /tmp/venv/bin/pip install ./bindings/python # setuptools, wheel, pybind11
                                                # (and cmake, ninja if missing)
                                                # from PyPI

    /usr/bin/python3 -m venv --system-site-packages /tmp/venv   # offline:
    /tmp/venv/bin/pip install --no-build-isolation ./bindings/python
                                                # Debian's tools, no PyPI

The C++ libraries (librdkafka, RocksDB, Abseil, ...) always come from
Debian, and the module links their shared libraries: a wheel installs on
machines with the same Debian packages. Debian's cmake and ninja are used
when they are on PATH (cmake 3.22 or newer): they come with the C++
packages from scripts/setup.sh, work offline, and save a download; only
when one is missing does setup.py ask for PyPI's ``cmake`` / ``ninja``
(setuptools passes ``setup_requires`` on as build requirements).

Environment:

* ``EXACTLY_CMAKE_BUILD_DIR``: the CMake build directory to use (default:
  ``build/cmake-<python tag>`` under this directory, kept between installs
  so that a second install only rebuilds the bindings). A directory that
  is already configured keeps its options (build type, tests, ...); it is
  only reconfigured for the Python and pybind11 of this build, which may
  be another venv, interpreter or pybind11 than last time (an isolated
  build gets a new temporary pybind11 every time), so the SDK is reused
  and the bindings recompile against the right headers.
* ``EXACTLY_CMAKE_ARGS``: extra arguments for the first configure step.
* ``CMAKE_BUILD_PARALLEL_LEVEL``: build jobs (default: the CPU count).
"""

import os
import re
import shlex
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
TARGET = "_exactly"
CMAKE_MINIMUM = (3, 22)  # the project's cmake_minimum_required
# Cache entries that describe the Python and the pybind11 a build directory
# was configured with: dropped before each configure, so that CMake finds
# them again for this build instead of keeping another interpreter's
# headers or a pybind11 from a deleted build environment.
PYTHON_CACHE_ENTRIES = ["Python3_*", "_Python3_*", "pybind11_*",
                        "PYTHON_*", "PYBIND11_PYTHON_EXECUTABLE_LAST"]


def _run(command, cwd=None):
    print("exactly:", " ".join(shlex.quote(str(c)) for c in command),
          flush=True)
    subprocess.run([str(c) for c in command], cwd=cwd, check=True)


def _cmake_version(cmake):
    try:
        out = subprocess.run([cmake, "--version"], capture_output=True,
                             text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return None
    match = re.search(r"version (\d+)\.(\d+)", out)
    return (int(match[1]), int(match[2])) if match else None


def _ninja():
    return shutil.which("ninja") or shutil.which("ninja-build")


def _build_tools_from_pypi():
    """PyPI's cmake / ninja, for the build requirements, when this machine
    has none of its own (or a cmake older than the project needs)."""
    wanted = []
    cmake = shutil.which("cmake")
    if cmake is None or (_cmake_version(cmake) or (0, 0)) < CMAKE_MINIMUM:
        wanted.append("cmake>=%d.%d" % CMAKE_MINIMUM)
    if _ninja() is None:
        wanted.append("ninja")
    return wanted


def _cached(cache, name):
    match = re.search(rf"^{re.escape(name)}:[A-Z]+=(.*)$", cache, re.M)
    return match[1] if match else None


class CMakeExtension(Extension):
    def __init__(self, name):
        super().__init__(name, sources=[])


class CMakeBuild(build_ext):
    def build_extension(self, ext):
        if not (ROOT / "CMakeLists.txt").is_file() or \
                not (ROOT / "sdk").is_dir():
            raise RuntimeError(
                f"exactly's sources are not around {HERE}: build from a "
                f"checkout of the repository (pip install ./bindings/python)")
        cmake = shutil.which("cmake")
        if cmake is None:
            raise RuntimeError("cmake not found: apt-get install cmake "
                               "(see scripts/setup.sh), or pip install with "
                               "build isolation, which brings PyPI's")
        tag = sysconfig.get_config_var("SOABI") or \
            f"py{sys.version_info[0]}{sys.version_info[1]}"
        build_dir = Path(os.environ.get("EXACTLY_CMAKE_BUILD_DIR") or
                         HERE / "build" / f"cmake-{tag}").resolve()
        cache_file = build_dir / "CMakeCache.txt"
        cache = cache_file.read_text() if cache_file.is_file() else None
        ninja = _ninja()

        configure = [cmake, "-S", ROOT, "-B", build_dir]
        if cache is None:
            configure += [
                "-DCMAKE_BUILD_TYPE=Release",
                "-DEXACTLY_BUILD_PYTHON=ON",
                "-DEXACTLY_BUILD_TESTS=OFF",
                "-DEXACTLY_BUILD_BENCH=OFF",
                "-DEXACTLY_BUILD_EXAMPLES=OFF",
            ]
            if ninja:
                configure += ["-G", "Ninja"]
        else:  # keep its options; only this build's Python and pybind11
            configure += [f"-U{entry}" for entry in PYTHON_CACHE_ENTRIES]
        if ninja and (cache is None or
                      _cached(cache, "CMAKE_GENERATOR") == "Ninja"):
            # A PyPI ninja lives in a temporary build environment.
            configure.append(f"-DCMAKE_MAKE_PROGRAM={ninja}")
        configure.append(f"-DPython3_EXECUTABLE={sys.executable}")
        try:  # the pybind11 of this build: PyPI's, or Debian's python3-pybind11
            import pybind11
            configure.append(f"-Dpybind11_DIR={pybind11.get_cmake_dir()}")
        except ImportError:
            pass  # Debian's pybind11-dev is found by CMake itself
        if cache is None:
            configure += shlex.split(os.environ.get("EXACTLY_CMAKE_ARGS", ""))
        _run(configure)
        jobs = os.environ.get("CMAKE_BUILD_PARALLEL_LEVEL") or \
            str(os.cpu_count() or 1)
        _run([cmake, "--build", build_dir, "--target", TARGET, "-j", jobs])

        suffix = sysconfig.get_config_var("EXT_SUFFIX") or ".so"
        built = build_dir / "bindings" / "python" / "exactly" / \
            f"{TARGET}{suffix}"
        if not built.is_file():
            raise RuntimeError(f"the build did not produce {built}")
        destination = Path(self.get_ext_fullpath(ext.name))
        destination.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(built, destination)


setup(
    ext_modules=[CMakeExtension("exactly._exactly")],
    cmdclass={"build_ext": CMakeBuild},
    # Build requirements beyond pyproject.toml's, asked for by pip through
    # setuptools' get_requires_for_build_wheel (not installed otherwise).
    setup_requires=_build_tools_from_pypi(),
)
