# CG over CDS / dense matrices (issue 8): kband_cg_tests, and with MPI the
# distributed CG on 1..4 ranks.
add_executable(kband_cg_tests kband_test_main.cpp test_cds.cpp test_cg.cpp test_cg_zebra.cpp)
target_link_libraries(kband_cg_tests PRIVATE kband::kband GTest::gtest)
target_include_directories(kband_cg_tests PRIVATE ${CMAKE_CURRENT_SOURCE_DIR})
if(KBAND_HAVE_KOKKOSKERNELS AND TARGET Kokkos::kokkoskernels)
  target_sources(kband_cg_tests PRIVATE test_cds_kokkoskernels.cpp)
  target_link_libraries(kband_cg_tests PRIVATE Kokkos::kokkoskernels)
endif()

set(_kband_cg_groups
  "cg.cds|CDS*"
  "cg.solve|CG*")
foreach(_group IN LISTS _kband_cg_groups)
  string(REPLACE "|" ";" _pair "${_group}")
  list(GET _pair 0 _name)
  list(GET _pair 1 _filter)
  add_test(NAME kband.unit.${_name} COMMAND kband_cg_tests --gtest_filter=${_filter})
  set_tests_properties(kband.unit.${_name} PROPERTIES TIMEOUT 300 LABELS "kband;unit")
endforeach()

if(KBAND_HAVE_MPI)
  add_executable(kband_cg_mpi_tests test_cg_mpi.cpp)
  target_link_libraries(kband_cg_mpi_tests PRIVATE kband::mpi GTest::gtest)
  target_include_directories(kband_cg_mpi_tests PRIVATE ${CMAKE_CURRENT_SOURCE_DIR})
  foreach(_np 1 2 3 4)
    add_test(NAME kband.unit.cg.mpi${_np}
             COMMAND ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} ${_np} --oversubscribe
                     $<TARGET_FILE:kband_cg_mpi_tests>)
    set_tests_properties(kband.unit.cg.mpi${_np} PROPERTIES TIMEOUT 300 LABELS "kband;unit"
      ENVIRONMENT "OMPI_ALLOW_RUN_AS_ROOT=1;OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1")
  endforeach()
endif()
