# Spack package recipe for mpix-st (stream-triggered MPI active-target RMA).
#
# UNTESTED: written without a Spack installation at hand; ctest's install.spack_recipe only checks
# that this file parses as Python. Written for Spack 0.22 or newer (language dependencies c/cxx,
# generator directive). Copy it into a Spack repository as packages/mpixst/package.py and set `git`
# to where the sources live before use.

import os

from spack.package import *


class Mpixst(CMakePackage, CudaPackage, ROCmPackage):
    """mpix-st: stream-triggered MPI active-target RMA. A library layered on any MPI through the
    PMPI profiling interface that lets a GPU stream drive post/start/put/complete/wait epochs
    (CUDA and HIP backends as run-time plugins, and a host backend that needs no GPU). Its API is
    source-compatible with HPE Cray MPICH's stream-triggered API. Link with -lmpixst before the
    MPI library (pkg-config mpixst, or CMake find_package(mpixst))."""

    # Placeholders: the project's public address is not decided yet.
    homepage = "https://example.invalid/mpix-st"
    git = "https://example.invalid/mpix-st.git"

    version("main", branch="main")

    variant("ofi", default=True, description="Inter-node path through libfabric triggered operations")
    variant("tests", default=False, description="Build the test suite (ctest)")
    variant("examples", default=False, description="Build the Faces and RMA benchmarks")

    generator("ninja")

    depends_on("cmake@3.22:", type="build")
    depends_on("ninja", type="build")
    depends_on("c", type="build")
    depends_on("cxx", type="build")

    depends_on("mpi")
    # Where each NIC sits, for the choice of a rank's NIC across nodes (MPIX_ST_OFI_NIC=auto).
    depends_on("hwloc@2:", when="+ofi")
    depends_on("libfabric", when="+ofi")
    depends_on("pkgconfig", type="build")  # how CMakeLists.txt finds libfabric and hwloc
    depends_on("doctest", type="test")
    depends_on("doctest", type="build", when="+tests")

    depends_on("cuda@11:", when="+cuda")
    depends_on("hip", when="+rocm")

    conflicts("%gcc@:9", msg="mpix-st is C++20")
    conflicts("+cuda", when="cuda_arch=none", msg="set cuda_arch (e.g. cuda_arch=90)")
    conflicts("+rocm", when="amdgpu_target=none", msg="set amdgpu_target (e.g. amdgpu_target=gfx90a)")

    def cmake_args(self):
        spec = self.spec

        def on_off(name, variant):
            return self.define(name, "ON" if spec.satisfies("+" + variant) else "OFF")

        args = [
            on_off("MPIX_ST_CUDA", "cuda"),
            on_off("MPIX_ST_HIP", "rocm"),
            on_off("MPIX_ST_OFI", "ofi"),
            on_off("MPIX_ST_HWLOC", "ofi"),
            self.define("MPIX_ST_BUILD_TESTS", self.run_tests or spec.satisfies("+tests")),
            self.define_from_variant("MPIX_ST_BUILD_EXAMPLES", "examples"),
            # The MPI that the library interposes, and that find_package(mpixst) and mpixst.pc
            # will hand to applications.
            self.define("MPI_C_COMPILER", spec["mpi"].mpicc),
            self.define("MPI_CXX_COMPILER", spec["mpi"].mpicxx),
        ]
        # FindMPI may otherwise pick another mpiexec from PATH for the tests (and record it in
        # mpixstConfig.cmake); MPIs launched by srun and the like have none here.
        mpiexec = join_path(spec["mpi"].prefix.bin, "mpiexec")
        if os.path.exists(mpiexec):
            args.append(self.define("MPIEXEC_EXECUTABLE", mpiexec))
        if spec.satisfies("+cuda"):
            archs = spec.variants["cuda_arch"].value
            args.append(self.define("CMAKE_CUDA_ARCHITECTURES", ";".join(archs)))
        if spec.satisfies("+rocm"):
            targets = spec.variants["amdgpu_target"].value
            args.append(self.define("MPIX_ST_HIP_ARCHS", ";".join(targets)))
        return args

    def check(self):
        # The CPU suite: real MPI processes on the host backend.
        ctest = Executable(join_path(self.spec["cmake"].prefix.bin, "ctest"))
        with working_dir(self.build_directory):
            ctest("-LE", "gpu", "--output-on-failure")
