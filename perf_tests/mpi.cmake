# kband-bench-mpi: scaling of the distributed compact derivative (own main:
# MPI_Init, Kokkos). scripts/bench_mpi_scaling.sh runs it on 1..P ranks.
if(KBAND_HAVE_MPI)
  add_executable(kband-bench-mpi ${CMAKE_CURRENT_SOURCE_DIR}/bench_mpi.cpp)
  target_link_libraries(kband-bench-mpi PRIVATE kband::mpi)
  target_include_directories(kband-bench-mpi PRIVATE ${CMAKE_CURRENT_SOURCE_DIR})
  install(TARGETS kband-bench-mpi RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
  if(KBAND_ENABLE_TESTS)
    add_test(NAME kband-bench-mpi-smoke
             COMMAND ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} 2 ${MPIEXEC_PREFLAGS} ${KBAND_MPIEXEC_OVERSUBSCRIBE}
                     $<TARGET_FILE:kband-bench-mpi> ${MPIEXEC_POSTFLAGS} --quick --json none)
    set_tests_properties(kband-bench-mpi-smoke PROPERTIES
      TIMEOUT 300 LABELS "benchmark;smoke;mpi"
      ENVIRONMENT "OMPI_ALLOW_RUN_AS_ROOT=1;OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1")
  endif()
endif()
