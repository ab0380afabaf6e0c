#!/usr/bin/env bash
# Installs what kband needs to build and test, from Debian 12 ("bookworm") only:
# compiler, CMake, Ninja, GoogleTest, Debian's Kokkos 3.4 (Serial) and Kokkos
# Kernels, Open MPI and LAPACK (reference peer in the tests/benchmarks).
#
# Idempotent and fast on a prepared machine: when every package is already
# installed (checked with dpkg-query) it touches nothing and needs no root.
# Otherwise it runs apt-get update + install, as root or through sudo.
#
#   scripts/setup-debian.sh            # install what is missing
#   scripts/setup-debian.sh --check    # only report; exit 1 if something is missing
set -euo pipefail

PACKAGES=(
  cmake
  g++
  ninja-build
  libgtest-dev
  libtrilinos-kokkos-dev
  libtrilinos-kokkos-kernels-dev
  libopenmpi-dev
  openmpi-bin
  liblapack-dev
)

missing=()
for pkg in "${PACKAGES[@]}"; do
  status="$(dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null || true)"
  [[ "$status" == "install ok installed" ]] || missing+=("$pkg")
done

if [[ ${#missing[@]} -eq 0 ]]; then
  echo "setup-debian: all ${#PACKAGES[@]} packages already installed"
  exit 0
fi
echo "setup-debian: missing: ${missing[*]}"
if [[ "${1:-}" == "--check" ]]; then
  exit 1
fi

if [[ "$(id -u)" -eq 0 ]]; then
  as_root=()
elif command -v sudo >/dev/null 2>&1; then
  as_root=(sudo)
else
  echo "setup-debian: not root and no sudo; install as root: apt-get install ${missing[*]}" >&2
  exit 1
fi

export DEBIAN_FRONTEND=noninteractive
"${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update
"${as_root[@]}" env DEBIAN_FRONTEND=noninteractive \
  apt-get install -y --no-install-recommends "${missing[@]}"
echo "setup-debian: installed ${missing[*]}"
