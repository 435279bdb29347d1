#!/usr/bin/env bash
# Sets up this machine, builds tony with AddressSanitizer and UBSan, and runs
# the whole test suite (unit, actor harness, local-backend integration, real
# YARN, end-to-end ML, fuzzing). What CI runs (.ci/run).
#
#   scripts/test.sh [ctest args...]     e.g. scripts/test.sh -L actors
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
start=$(date +%s)

phases=()
phase() { phases+=("$1 $(( $(date +%s) - $2 )) s"); }

t=$(date +%s)
"$here/scripts/setup.sh"
phase setup "$t"

build=${TONY_BUILD_DIR:-$here/build-asan}
t=$(date +%s)
TONY_BUILD_DIR="$build" "$here/scripts/build.sh" --sanitize -DTONY_WERROR=ON
phase build "$t"

# Tasks on the local backend and on the local YARN find the examples'
# Python (torch, tensorflow) first on PATH.
export PATH="${TONY_VENV:-$here/.venv}/bin:$PATH"
# CAF keeps some singletons alive at exit; leaks are not errors here.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0:abort_on_error=0:strict_string_checks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

status=0
t=$(date +%s)
# Two at a time on two cores. Three was tried: clusters then started so
# slowly that the HA tier's RMs were not back within tony-submit's 60 s
# and the first WebHDFS read passed 10 s (doc/testing.md).
(cd "$build" && ctest --output-on-failure --timeout 1200 -j "${TONY_TEST_JOBS:-2}" "$@") || status=$?
phase ctest "$t"

if [[ $# -eq 0 && -x "$here/scripts/fuzz.sh" ]]; then
  t=$(date +%s)
  "$here/scripts/fuzz.sh" || status=$?
  phase fuzz "$t"
fi

# Where the time went: each phase, and the slowest tests (ctest's own record).
echo "test.sh: phases: $(IFS=,; echo "${phases[*]}" | sed 's/,/, /g')"
costs="$build/Testing/Temporary/CTestCostData.txt"
if [[ -f "$costs" ]]; then
  echo "test.sh: the slowest tests (seconds):"
  # sed, not head: head's early exit would fail the pipe (pipefail).
  awk '$0 == "---" { exit }
       NF >= 3 { cost = $NF; NF -= 2; printf "  %8.1f  %s\n", cost, $0 }' "$costs" |
    sort -rn | sed -n '1,25p'
fi

# ctest printed a failing test's output where it ended, long scrolled away
# in CI's log: its last lines again, at the end (LastTest.log keeps them).
log="$build/Testing/Temporary/LastTest.log"
if [[ $status -ne 0 && -f "$log" ]]; then
  awk 'match($0, /^[0-9]+\/[0-9]+ Testing: /) { name = substr($0, RLENGTH + 1); n = 0; failed = 0 }
       /^Test Failed\.$/ { failed = 1 }
       { lines[n++ % 60] = substr($0, 1, 200) }
       name != "" && index($0, "\"" name "\" end time:") == 1 {
         if (failed) {
           print "test.sh: the end of the output of failed test \"" name "\":"
           for (i = (n > 60 ? n - 60 : 0); i < n; i++) print "  | " lines[i % 60]
         }
         name = ""
       }' "$log"
fi

echo "test.sh: finished in $(( $(date +%s) - start )) s with status $status"
exit $status
