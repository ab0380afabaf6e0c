# kband MPI tests: one executable with its own main (MPI_Init, Kokkos), run by
# mpiexec on 1, 2, 3 and 4 ranks (oversubscribed on small machines).
if(KBAND_HAVE_MPI)
  add_executable(kband_mpi_tests
    ${CMAKE_CURRENT_SOURCE_DIR}/test_mpi_main.cpp
    ${CMAKE_CURRENT_SOURCE_DIR}/test_mpi_halo.cpp
    ${CMAKE_CURRENT_SOURCE_DIR}/test_mpi_errors.cpp
    ${CMAKE_CURRENT_SOURCE_DIR}/test_mpi_distd2.cpp)
  target_link_libraries(kband_mpi_tests PRIVATE kband::mpi GTest::gtest)
  target_include_directories(kband_mpi_tests PRIVATE ${CMAKE_CURRENT_SOURCE_DIR})
  foreach(_np 1 2 3 4)
    add_test(NAME kband.mpi.np${_np}
             COMMAND ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} ${_np} ${MPIEXEC_PREFLAGS} ${KBAND_MPIEXEC_OVERSUBSCRIBE}
                     $<TARGET_FILE:kband_mpi_tests> ${MPIEXEC_POSTFLAGS})
    set_tests_properties(kband.mpi.np${_np} PROPERTIES
      TIMEOUT 300 LABELS "kband;mpi"
      ENVIRONMENT "OMPI_ALLOW_RUN_AS_ROOT=1;OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1")
  endforeach()
endif()
