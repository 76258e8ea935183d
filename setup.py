"""Builds the extension rematch._core with the project's CMake (target rematch_python) and packages it with
python/rematch/. pyproject.toml holds the metadata; this file only runs CMake.

CMake options come from the environment: CMAKE_ARGS (e.g. "-DREMATCH_CUDA=OFF", "-DREMATCH_NATIVE=OFF" for a
wheel that moves to other machines) and CMAKE_BUILD_PARALLEL_LEVEL (build jobs). The C++ dependencies of a
rematch build (README: OpenBLAS, CLI11, nlohmann-json, HDF5, stb; pybind11 and the Python headers) must be
installed; the CUDA backend is built when nvcc is found, as in any rematch build.
"""
import os
import shutil
import subprocess
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = os.path.dirname(os.path.abspath(__file__))


class CMakeExtension(Extension):
    def __init__(self, name):
        super().__init__(name, sources=[])


class CMakeBuild(build_ext):
    def build_extension(self, ext):
        build_dir = os.path.abspath(os.path.join(self.build_temp, "cmake"))
        args = [f"-DPython_EXECUTABLE={sys.executable}", "-DREMATCH_PYTHON=ON", "-DREMATCH_BUILD_TESTS=OFF",
                "-DREMATCH_BUILD_BENCH=OFF", "-DCMAKE_BUILD_TYPE=Release"]
        args += os.environ.get("CMAKE_ARGS", "").split()
        subprocess.check_call(["cmake", "-S", ROOT, "-B", build_dir] + args)
        subprocess.check_call(["cmake", "--build", build_dir, "--target", "rematch_python"])
        built = os.path.join(build_dir, "python", "rematch", os.path.basename(self.get_ext_filename(ext.name)))
        target = self.get_ext_fullpath(ext.name)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        shutil.copyfile(built, target)


setup(
    packages=["rematch"],
    package_dir={"": "python"},
    ext_modules=[CMakeExtension("rematch._core")],
    cmdclass={"build_ext": CMakeBuild},
    # setuptools' default build/ is the CMake build folder of the README and CI.
    options={"build": {"build_base": "build-pip"}},
)
