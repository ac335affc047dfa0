"""Builds exactly's extension module with the project's CMake build.

The package metadata is in pyproject.toml; this file only teaches
setuptools to build ``exactly._exactly`` by configuring the whole project
(the SDK, the bundled broker and the bindings; no tests, benchmarks or
examples) and building the ``_exactly`` target, then copying the module
into the wheel. It needs the repository around it (``bindings/python`` is
two levels below the project root) and the Debian build packages that
``scripts/setup.sh`` installs.

Offline, with Debian's setuptools, wheel and pybind11 (no PyPI):

    /usr/bin/python3 -m venv --system-site-packages /tmp/venv
    /tmp/venv/bin/pip install --no-build-isolation ./bindings/python

Environment:

* ``EXACTLY_CMAKE_BUILD_DIR``: the CMake build directory to use (default:
  ``build/cmake-<python tag>`` under this directory, kept between installs
  so that a second install only relinks). An already configured directory
  is built as it is, not reconfigured.
* ``EXACTLY_CMAKE_ARGS``: extra arguments for the configure step.
* ``CMAKE_BUILD_PARALLEL_LEVEL``: build jobs (default: the CPU count).
"""

import os
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


def _run(command, cwd=None):
    print("exactly:", " ".join(shlex.quote(str(c)) for c in command),
          flush=True)
    subprocess.run([str(c) for c in command], cwd=cwd, check=True)


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
                               "(see scripts/setup.sh)")
        tag = sysconfig.get_config_var("SOABI") or \
            f"py{sys.version_info[0]}{sys.version_info[1]}"
        build_dir = Path(os.environ.get("EXACTLY_CMAKE_BUILD_DIR") or
                         HERE / "build" / f"cmake-{tag}").resolve()
        if not (build_dir / "CMakeCache.txt").is_file():
            configure = [
                cmake, "-S", ROOT, "-B", build_dir,
                "-DCMAKE_BUILD_TYPE=Release",
                "-DEXACTLY_BUILD_PYTHON=ON",
                "-DEXACTLY_BUILD_TESTS=OFF",
                "-DEXACTLY_BUILD_BENCH=OFF",
                "-DEXACTLY_BUILD_EXAMPLES=OFF",
                f"-DPython3_EXECUTABLE={sys.executable}",
            ]
            if shutil.which("ninja"):
                configure += ["-G", "Ninja"]
            try:  # pybind11 from pip, if that is the one there is
                import pybind11
                configure.append(f"-Dpybind11_DIR={pybind11.get_cmake_dir()}")
            except ImportError:
                pass  # Debian's pybind11-dev is found by CMake itself
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
)
