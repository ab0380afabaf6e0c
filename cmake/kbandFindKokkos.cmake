# kbandFindKokkos.cmake -- locate Kokkos (and optionally Kokkos Kernels).
#
# 1. A normal Kokkos install (Kokkos_ROOT / CMAKE_PREFIX_PATH) exporting
#    Kokkos::kokkos is preferred.
# 2. Otherwise Debian's Trilinos-packaged Kokkos 3.4 is wrapped: its export has
#    targets named trilinos_kokkoscore... without usable include directories, so
#    we build imported INTERFACE targets Kokkos::kokkos and Kokkos::kokkoskernels
#    on top of it.
#
# Sets KBAND_KOKKOS_FLAVOR ("native" or "trilinos") and KBAND_HAVE_KOKKOSKERNELS.

include_guard(GLOBAL)

find_package(Kokkos CONFIG QUIET)
if(Kokkos_FOUND AND TARGET Kokkos::kokkos)
  set(KBAND_KOKKOS_FLAVOR "native")
else()
  # Debian / Trilinos flavour. Its KokkosConfig.cmake defines Kokkos_INCLUDE_DIRS
  # and Kokkos_LIBRARIES (plain target names); the include path it records for the
  # targets themselves does not exist, so we take only the libraries from it.
  unset(Kokkos_FOUND)
  set(Kokkos_CONFIG_INCLUDED "")
  find_package(Kokkos CONFIG QUIET NAMES Kokkos
               PATHS /usr/lib/x86_64-linux-gnu/cmake /usr/lib/cmake /usr/lib64/cmake)
  if(NOT Kokkos_FOUND OR NOT Kokkos_LIBRARIES)
    message(FATAL_ERROR "kband: no Kokkos found. Set Kokkos_ROOT to a Kokkos install, "
                        "or install Debian's libtrilinos-kokkos-dev.")
  endif()
  find_path(KBAND_TRILINOS_KOKKOS_INCLUDE Kokkos_Core.hpp
            HINTS ${Kokkos_INCLUDE_DIRS} PATHS /usr/include/trilinos NO_DEFAULT_PATH)
  if(NOT KBAND_TRILINOS_KOKKOS_INCLUDE)
    message(FATAL_ERROR "kband: Trilinos Kokkos found but Kokkos_Core.hpp is not in ${Kokkos_INCLUDE_DIRS}")
  endif()
  add_library(Kokkos::kokkos INTERFACE IMPORTED)
  set_target_properties(Kokkos::kokkos PROPERTIES
    INTERFACE_INCLUDE_DIRECTORIES "${KBAND_TRILINOS_KOKKOS_INCLUDE}"
    INTERFACE_LINK_LIBRARIES "${Kokkos_LIBRARIES}")
  set(KBAND_KOKKOS_FLAVOR "trilinos")
endif()

set(KBAND_HAVE_KOKKOSKERNELS OFF)
if(KBAND_ENABLE_KOKKOSKERNELS)
  find_package(KokkosKernels CONFIG QUIET)
  if(KokkosKernels_FOUND AND TARGET Kokkos::kokkoskernels)
    set(KBAND_HAVE_KOKKOSKERNELS ON)
  elseif(KokkosKernels_FOUND AND KokkosKernels_LIBRARIES AND KBAND_KOKKOS_FLAVOR STREQUAL "trilinos")
    add_library(Kokkos::kokkoskernels INTERFACE IMPORTED)
    set_target_properties(Kokkos::kokkoskernels PROPERTIES
      INTERFACE_INCLUDE_DIRECTORIES "${KBAND_TRILINOS_KOKKOS_INCLUDE}"
      INTERFACE_LINK_LIBRARIES "${KokkosKernels_LIBRARIES}")
    set(KBAND_HAVE_KOKKOSKERNELS ON)
  endif()
endif()

message(STATUS "kband: Kokkos ${Kokkos_VERSION} (${KBAND_KOKKOS_FLAVOR}), Kokkos Kernels: ${KBAND_HAVE_KOKKOSKERNELS}")
