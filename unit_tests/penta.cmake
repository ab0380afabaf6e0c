# Pentadiagonal solvers and formats (issue 4): their own test executable.
add_executable(kband_penta_tests
  kband_test_main.cpp
  test_penta.cpp
  test_penta_formats.cpp)
target_link_libraries(kband_penta_tests PRIVATE kband::kband GTest::gtest)
target_include_directories(kband_penta_tests PRIVATE ${CMAKE_CURRENT_SOURCE_DIR})
add_test(NAME kband.unit.penta_accuracy COMMAND kband_penta_tests --gtest_filter=PentaAccuracy*)
add_test(NAME kband.unit.penta_other COMMAND kband_penta_tests --gtest_filter=-PentaAccuracy*)
set_tests_properties(kband.unit.penta_accuracy kband.unit.penta_other PROPERTIES TIMEOUT 300 LABELS "kband;unit")
