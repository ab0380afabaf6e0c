# GCC 12.2 to 12.5 drop the constexpr default constructor of the reference
# count inside Kokkos >= 4.5's Views (kokkos/kokkos#7464 and #8187; Kokkos
# works around it from #8223 and #9262 on): a default-constructed View then
# holds a null allocation record, and copying it crashes. kband copies empty
# Views (workspaces a caller did not pass, unused kernel arguments), so where
# such a compiler meets such a Kokkos this probe builds and runs a copy of an
# empty View at configure time and stops with an explanation if it fails.
option(KBAND_CHECK_KOKKOS_VIEWS
  "Probe at configure time (GCC 12 with Kokkos >= 4.5) whether an empty Kokkos::View can be copied" ON)

if(KBAND_CHECK_KOKKOS_VIEWS AND NOT CMAKE_CROSSCOMPILING
   AND CMAKE_CXX_COMPILER_ID STREQUAL "GNU"
   AND CMAKE_CXX_COMPILER_VERSION VERSION_GREATER_EQUAL 12.2
   AND CMAKE_CXX_COMPILER_VERSION VERSION_LESS 13
   AND Kokkos_VERSION VERSION_GREATER_EQUAL 4.5
   AND NOT KBAND_KOKKOS_VIEW_PROBED STREQUAL "${Kokkos_DIR};${CMAKE_CXX_COMPILER}")
  set(_kband_probe_dir ${CMAKE_CURRENT_BINARY_DIR}/kband_view_probe)
  file(WRITE ${_kband_probe_dir}/probe.cpp [=[
#include <Kokkos_Core.hpp>
// No Kokkos::initialize: constructing, copying and destroying an empty View
// touches no backend.
int main() {
  Kokkos::View<double*, Kokkos::HostSpace> empty;
  Kokkos::View<double*, Kokkos::HostSpace> copy = empty;  // crashes where the bug is
  return copy.data() == nullptr ? 0 : 1;
}
]=])
  message(STATUS "kband: probing whether GCC ${CMAKE_CXX_COMPILER_VERSION} builds Kokkos ${Kokkos_VERSION}'s empty Views correctly")
  unset(_kband_probe_run CACHE)
  unset(_kband_probe_compiled CACHE)
  try_run(_kband_probe_run _kband_probe_compiled ${_kband_probe_dir}/build ${_kband_probe_dir}/probe.cpp
          CMAKE_FLAGS -DCMAKE_CXX_STANDARD=17
          LINK_LIBRARIES Kokkos::kokkos
          COMPILE_OUTPUT_VARIABLE _kband_probe_out
          RUN_OUTPUT_VARIABLE _kband_probe_run_out)
  if(NOT _kband_probe_compiled)
    message(WARNING "kband: the Kokkos View probe did not compile, so it could not check this compiler "
                    "(set KBAND_CHECK_KOKKOS_VIEWS=OFF to skip it):\n${_kband_probe_out}")
  elseif(NOT _kband_probe_run STREQUAL "FAILED_TO_RUN" AND NOT _kband_probe_run EQUAL 0)
    # it ran and failed without crashing (e.g. a CUDA build without a driver
    # here: exit 127): nothing learnt
    message(STATUS "kband: the Kokkos View probe could not run here (exit ${_kband_probe_run}); not checked")
    set(KBAND_KOKKOS_VIEW_PROBED "${Kokkos_DIR};${CMAKE_CXX_COMPILER}" CACHE INTERNAL "")
  elseif(_kband_probe_run STREQUAL "FAILED_TO_RUN")
    message(FATAL_ERROR
      "kband: with GCC ${CMAKE_CXX_COMPILER_VERSION}, Kokkos ${Kokkos_VERSION} (${Kokkos_DIR}) builds Views "
      "whose empty state cannot be copied: copying a default-constructed Kokkos::View crashed "
      "(a GCC 12.2-12.5 code-generation bug, kokkos/kokkos issues #7464 and #8187). Any program that "
      "copies an empty View would crash, kband's solvers included. Use a Kokkos that carries the "
      "workaround (kokkos/kokkos pull requests #8223 and, for GCC 12.5, #9262), or build Kokkos and kband "
      "with another compiler (GCC <= 12.1 or >= 13, Clang). KBAND_CHECK_KOKKOS_VIEWS=OFF skips this probe. "
      "Probe output: ${_kband_probe_run_out}")
  else()
    # probed once for this Kokkos and compiler (a failure probes again)
    set(KBAND_KOKKOS_VIEW_PROBED "${Kokkos_DIR};${CMAKE_CXX_COMPILER}" CACHE INTERNAL "")
  endif()
endif()
