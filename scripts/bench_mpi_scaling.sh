#!/usr/bin/env bash
# Strong and weak scaling of kband's distributed compact derivative
# (kband-bench-mpi) for each rank count given.
#
#   scripts/bench_mpi_scaling.sh [-b BUILD_DIR] [-o OUT_DIR] [-g] RANKS [RANKS ...] [-- BENCH_ARGS]
#
#   RANKS       rank counts, e.g. 1 2 4 8 or 1,2,3,4
#   -b DIR      build directory holding perf_tests/kband-bench-mpi (default build)
#   -o DIR      where the JSON files and logs go (default bench-mpi-results)
#   -g          GPU run: one rank per GPU (Kokkos maps rank -> device by the
#               node-local MPI rank); the rank count must not exceed the GPUs
#   BENCH_ARGS  passed to kband-bench-mpi, e.g. --n 512 --dirs x,y,z --mode both
#
# Each run measures its own single-rank reference (rank 0 alone on the N^3
# problem), so every efficiency is a ratio within one run. Environment:
# MPIEXEC (default mpiexec), MPIEXEC_FLAGS (extra flags, e.g. --bind-to socket),
# KBAND_MPI_GPU_AWARE (1/0: whether the MPI takes device pointers).
set -euo pipefail

build=build
out=bench-mpi-results
gpu=0
ranks=()
while [[ $# -gt 0 ]]; do
  case "$1" in
    -b) build="$2"; shift 2 ;;
    -o) out="$2"; shift 2 ;;
    -g) gpu=1; shift ;;
    -h|--help) sed -n '2,18p' "$0"; exit 0 ;;
    --) shift; break ;;
    *) for r in ${1//,/ }; do ranks+=("$r"); done; shift ;;
  esac
done
bench_args=("$@")
[[ ${#ranks[@]} -gt 0 ]] || { echo "bench_mpi_scaling.sh: give at least one rank count" >&2; exit 2; }
exe="$build/perf_tests/kband-bench-mpi"
[[ -x "$exe" ]] || { echo "bench_mpi_scaling.sh: $exe not built (cmake --build $build --target kband-bench-mpi)" >&2; exit 2; }
mkdir -p "$out"

mpiexec_cmd=${MPIEXEC:-mpiexec}
flags=()
if "$mpiexec_cmd" --version 2>&1 | grep -q "Open MPI\|OpenRTE"; then
  flags+=(--oversubscribe)
  [[ $(id -u) -eq 0 ]] && flags+=(--allow-run-as-root)
fi
# shellcheck disable=SC2206
flags+=(${MPIEXEC_FLAGS:-})
kokkos_args=()
if [[ $gpu -eq 1 ]]; then
  kokkos_args+=(--kokkos-map-device-id-by=mpi_rank)
fi

status=0
for p in "${ranks[@]}"; do
  tag="np${p}"
  echo "=== $p rank(s): $mpiexec_cmd -n $p ${flags[*]} $exe ${bench_args[*]} --json $out/kband-bench-mpi-$tag.json"
  if ! "$mpiexec_cmd" -n "$p" "${flags[@]}" "$exe" "${bench_args[@]}" --json "$out/kband-bench-mpi-$tag.json" \
      "${kokkos_args[@]}" 2>&1 | tee "$out/kband-bench-mpi-$tag.log"; then
    status=1
  fi
done
echo "=== summary (efficiency per run; JSON in $out)"
grep -h "efficiency" "$out"/kband-bench-mpi-np*.log | grep -v "^distd2" || true
exit $status
