# The skew-symmetric transport RHS of examples/transport (issue 7):
# kband_transport_tests, and with MPI the same RHS on 1, 2 and 4 ranks
# (process grids 1x1x1, 2x1x1, 1x2x2) compared to 1e-12 (--oversubscribe with
# Open MPI, from mpi/CMakeLists.txt).
add_executable(kband_transport_tests kband_test_main.cpp test_transport.cpp)
target_link_libraries(kband_transport_tests PRIVATE kband::kband GTest::gtest)
target_include_directories(kband_transport_tests PRIVATE ${CMAKE_CURRENT_SOURCE_DIR})
add_test(NAME kband.unit.transport COMMAND kband_transport_tests)
set_tests_properties(kband.unit.transport PROPERTIES TIMEOUT 300 LABELS "kband;unit")

if(KBAND_HAVE_MPI)
  add_executable(kband_transport_mpi_tests test_mpi_main.cpp test_transport_mpi.cpp)
  target_link_libraries(kband_transport_mpi_tests PRIVATE kband::mpi GTest::gtest)
  target_include_directories(kband_transport_mpi_tests PRIVATE ${CMAKE_CURRENT_SOURCE_DIR})
  foreach(_np 1 2 4)
    add_test(NAME kband.unit.transport.mpi${_np}
             COMMAND ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} ${_np} ${KBAND_MPIEXEC_OVERSUBSCRIBE}
                     $<TARGET_FILE:kband_transport_mpi_tests>)
    set_tests_properties(kband.unit.transport.mpi${_np} PROPERTIES TIMEOUT 300 LABELS "kband;unit"
      ENVIRONMENT "OMPI_ALLOW_RUN_AS_ROOT=1;OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1;OMPI_MCA_mpi_yield_when_idle=1")
  endforeach()
endif()
