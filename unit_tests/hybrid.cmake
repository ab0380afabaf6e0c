# Thomas-PCR hybrid (kband::hybrid) and solve_tridiagonal's choice of it.
add_executable(kband_hybrid_tests kband_test_main.cpp test_hybrid.cpp)
target_link_libraries(kband_hybrid_tests PRIVATE kband::kband GTest::gtest)
target_include_directories(kband_hybrid_tests PRIVATE ${CMAKE_CURRENT_SOURCE_DIR})
add_test(NAME kband.unit.hybrid COMMAND kband_hybrid_tests)
set_tests_properties(kband.unit.hybrid PROPERTIES TIMEOUT 300 LABELS "kband;unit")
