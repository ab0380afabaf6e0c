# kbandFindKokkos.cmake -- locate Kokkos (and optionally Kokkos Kernels).
#
# 1. A normal Kokkos install (Kokkos_ROOT / CMAKE_PREFIX_PATH) exporting
#    Kokkos::kokkos is preferred.
# 2. A TriBITS-generated config (Trilinos, and Debian's libtrilinos-kokkos-dev
#    3.4) is recognised by its Kokkos_LIBRARIES / Kokkos_INCLUDE_DIRS variables.
#    Debian's copy defines a Kokkos::kokkos whose include directory
#    (/usr/lib/include) does not exist and whose libraries are named
#    trilinos_kokkoscore...; we point Kokkos::kokkos (created if missing) at
#    Kokkos_INCLUDE_DIRS and Kokkos_LIBRARIES, and build Kokkos::kokkoskernels
#    the same way.
#
# Input (optional): KBAND_KOKKOS_HINTS -- directories searched after Kokkos_ROOT
# and CMAKE_PREFIX_PATH; the installed kbandConfig.cmake sets it to the Kokkos
# kband was built with.
# Sets KBAND_KOKKOS_FLAVOR ("native" or "trilinos") and KBAND_HAVE_KOKKOSKERNELS.
#
# Included once per directory (the installed kbandConfig.cmake may be loaded
# from several directories of one project); a second inclusion in a directory
# that already sees a usable Kokkos::kokkos only re-reads the package.

include_guard(DIRECTORY)

find_package(Kokkos CONFIG QUIET
             HINTS ${KBAND_KOKKOS_HINTS}
             PATHS /usr/lib/x86_64-linux-gnu/cmake /usr/lib/cmake /usr/lib64/cmake)
if(NOT Kokkos_FOUND)
  message(FATAL_ERROR "kband: no Kokkos found. Set Kokkos_ROOT to a Kokkos install, "
                      "or install Debian's libtrilinos-kokkos-dev.")
endif()

set(KBAND_KOKKOS_FLAVOR "native")
if(Kokkos_LIBRARIES AND Kokkos_INCLUDE_DIRS)
  # TriBITS flavour: trust only the variables; repair the target if needed.
  set(KBAND_KOKKOS_FLAVOR "trilinos")
  find_path(KBAND_TRILINOS_KOKKOS_INCLUDE Kokkos_Core.hpp
            HINTS ${Kokkos_INCLUDE_DIRS} PATHS /usr/include/trilinos NO_DEFAULT_PATH)
  if(NOT KBAND_TRILINOS_KOKKOS_INCLUDE)
    message(FATAL_ERROR "kband: Trilinos Kokkos found (${Kokkos_DIR}) but Kokkos_Core.hpp "
                        "is not in ${Kokkos_INCLUDE_DIRS}")
  endif()
  set(_kband_kokkos_usable FALSE)
  if(TARGET Kokkos::kokkos)
    get_target_property(_kband_inc Kokkos::kokkos INTERFACE_INCLUDE_DIRECTORIES)
    foreach(_kband_d IN LISTS _kband_inc)
      if(EXISTS "${_kband_d}/Kokkos_Core.hpp")
        set(_kband_kokkos_usable TRUE)
      endif()
    endforeach()
  else()
    add_library(Kokkos::kokkos INTERFACE IMPORTED)
  endif()
  if(NOT _kband_kokkos_usable)
    set_target_properties(Kokkos::kokkos PROPERTIES
      INTERFACE_INCLUDE_DIRECTORIES "${KBAND_TRILINOS_KOKKOS_INCLUDE}"
      INTERFACE_LINK_LIBRARIES "${Kokkos_LIBRARIES}")
  endif()
  unset(_kband_kokkos_usable)
  unset(_kband_inc)
  unset(_kband_d)
elseif(NOT TARGET Kokkos::kokkos)
  message(FATAL_ERROR "kband: the Kokkos found at ${Kokkos_DIR} defines no Kokkos::kokkos target")
endif()

set(KBAND_HAVE_KOKKOSKERNELS OFF)
if(KBAND_ENABLE_KOKKOSKERNELS)
  # Prefer the Kokkos Kernels installed beside the Kokkos in use: a system copy
  # built against another Kokkos (Debian's 3.4) must not shadow it.
  if(NOT KokkosKernels_DIR AND NOT KokkosKernels_ROOT AND Kokkos_DIR)
    get_filename_component(_kband_kprefix "${Kokkos_DIR}/../../.." ABSOLUTE)
    find_package(KokkosKernels CONFIG QUIET PATHS "${_kband_kprefix}" NO_DEFAULT_PATH)
    unset(_kband_kprefix)
  endif()
  if(NOT KokkosKernels_FOUND)
    find_package(KokkosKernels CONFIG QUIET HINTS ${KBAND_KOKKOS_HINTS})
  endif()
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

message(STATUS "kband: Kokkos ${Kokkos_VERSION} (${KBAND_KOKKOS_FLAVOR}, ${Kokkos_DIR}), Kokkos Kernels: ${KBAND_HAVE_KOKKOSKERNELS}")
