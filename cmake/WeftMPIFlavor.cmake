# weft_mpi_flavor(version_string out_var): "openmpi", "mpich" (MPICH and the
# MPIs built on it: Intel MPI, MVAPICH, Cray MPICH) or "other", from the
# MPI library's version string (MPI_C_LIBRARY_VERSION_STRING of FindMPI).
# Used by weft's own build and by weftConfig.cmake for consumers.
function(weft_mpi_flavor version_string out_var)
  if(version_string MATCHES "Open MPI")
    set(${out_var} openmpi PARENT_SCOPE)
  elseif(version_string MATCHES "MPICH|MVAPICH|Intel\\(R\\) MPI")
    set(${out_var} mpich PARENT_SCOPE)
  else()
    set(${out_var} other PARENT_SCOPE)
  endif()
endfunction()
