# shellcheck shell=bash
# Shared by the bench/ scripts (sourced, not run). Part of bench/.
#
# Sets REPO_ROOT from the location of the sourcing script and provides:
#   die MESSAGE            print to stderr and exit 1
#   skip MESSAGE           print to stderr and exit 77 (an anchor is missing)
#   find_dlaunch           print the dlaunch binary: $DLAUNCH, else
#                          REPO_ROOT/build/src/dlaunch (built there if absent)
#   compile_helpers DIR    compile the C helpers of bench/ into DIR (needs cc)
#   median                 median of the numbers on stdin, one a line
#   machine_summary        one line: cores, memory, load average

BENCH_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO_ROOT=$(cd "$BENCH_DIR/.." && pwd)

die() { echo "$(basename "$0"): $*" >&2; exit 1; }
skip() { echo "$(basename "$0"): SKIP: $*" >&2; exit 77; }

find_dlaunch() {
  if [[ -n ${DLAUNCH:-} ]]; then
    [[ -x $DLAUNCH ]] || die "DLAUNCH=$DLAUNCH is not an executable file"
    printf '%s\n' "$DLAUNCH"
    return
  fi
  local build=$REPO_ROOT/build candidate=$REPO_ROOT/build/src/dlaunch
  if [[ ! -x $candidate ]]; then
    command -v cmake >/dev/null || die "no dlaunch at $candidate and no cmake to build it; set DLAUNCH"
    echo "$(basename "$0"): building dlaunch in $build ..." >&2
    local generator=()
    [[ ! -f $build/CMakeCache.txt ]] && command -v ninja >/dev/null && generator=(-G Ninja)
    { cmake -S "$REPO_ROOT" -B "$build" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release &&
      cmake --build "$build" --target dlaunch -j "$(nproc)"; } >&2 ||
      die "could not build dlaunch in $build; build it or set DLAUNCH"
    [[ -x $candidate ]] || die "the build made no $candidate; set DLAUNCH"
  fi
  printf '%s\n' "$candidate"
}

compile_helpers() {
  local dir=$1 name
  for name in "${@:2}"; do
    cc -O2 -o "$dir/$name" "$BENCH_DIR/$name.c" || die "cannot compile bench/$name.c"
  done
}

median() {
  sort -g | awk '{ v[NR] = $1 } END {
    if (NR == 0) { print "nan"; exit }
    if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

machine_summary() {
  local cores memory load
  cores=$(nproc)
  memory=$(awk '/^MemTotal:/ { printf "%.1f GiB", $2 / 1048576 }' /proc/meminfo)
  load=$(cut -d' ' -f1-3 /proc/loadavg)
  echo "machine: $cores cores, $memory memory, load average $load"
}
