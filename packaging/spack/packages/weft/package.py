# Spack package for weft, built from a checkout (weft has no release
# tarball yet):
#   spack repo add packaging/spack
#   spack dev-build weft@0.1.0 ^openmpi     (in the source tree; or ^mpich)
# The MPI is Spack's provider of the virtual package "mpi"; weft records
# which one it was built with (weft.pc, weftConfig.cmake, weft_build.h).

from spack.package import *


class Weft(CMakePackage):
    """Communication for multithreaded programs on hierarchical machines:
    scalable endpoints, one-sided communication with explicit events,
    hardware-topology teams and communicators, and a per-component model
    of a small message's cost."""

    license("BSD-3-Clause")

    version("0.1.0")

    variant("apps", default=True, description="Build the paper applications (NAS FT, SUMMA, DGEMM, ...)")
    variant("bench", default=True, description="Build the benchmarks and the programs the weft command runs")
    variant("python", default=True, description="Install the weft command (Python toolkit)")
    variant("profile", default=True, description="Compile the trace points (selected at run time)")

    depends_on("c", type="build")
    depends_on("cmake@3.16:", type="build")
    depends_on("pkgconfig", type="build")
    depends_on("mpi")
    depends_on("ucx@1.13:")
    depends_on("hwloc@2:")
    depends_on("fftw@3", when="+apps")
    depends_on("openblas", when="+apps")
    depends_on("python@3.11:", when="+python", type=("build", "run"))
    depends_on("py-pip", when="+python", type="build")
    depends_on("py-numpy", when="+python", type="run")
    depends_on("py-matplotlib", when="+python", type="run")
    depends_on("py-rich", when="+python", type="run")

    def cmake_args(self):
        spec = self.spec
        return [
            self.define("MPI_C_COMPILER", spec["mpi"].mpicc),
            self.define("MPIEXEC_EXECUTABLE", join_path(spec["mpi"].prefix.bin, "mpiexec")),
            self.define("WEFT_BUILD_TESTS", self.run_tests),
            self.define_from_variant("WEFT_BUILD_BENCH", "bench"),
            self.define_from_variant("WEFT_BUILD_APPS", "apps"),
            self.define_from_variant("WEFT_PROFILE", "profile"),
        ]

    @run_after("install")
    def install_toolkit(self):
        if self.spec.satisfies("+python"):
            pip = which("pip") or Executable(join_path(self.spec["python"].prefix.bin, "pip3"))
            pip("install", "--no-deps", "--no-build-isolation", f"--prefix={self.prefix}",
                join_path(self.stage.source_path, "python"))

    def setup_run_environment(self, env):
        env.set("WEFT_PREFIX", self.prefix)
