# Compact finite-difference operators and DistD2 on one rank (issue 5).
add_executable(kband_distd2_tests
  kband_test_main.cpp
  test_compact.cpp
  test_distd2.cpp)
target_link_libraries(kband_distd2_tests PRIVATE kband::kband GTest::gtest)
target_include_directories(kband_distd2_tests PRIVATE ${CMAKE_CURRENT_SOURCE_DIR})
add_test(NAME kband.unit.distd2_compact COMMAND kband_distd2_tests --gtest_filter=Compact*)
add_test(NAME kband.unit.distd2 COMMAND kband_distd2_tests --gtest_filter=-Compact*)
set_tests_properties(kband.unit.distd2_compact kband.unit.distd2 PROPERTIES TIMEOUT 300 LABELS "kband;unit")
