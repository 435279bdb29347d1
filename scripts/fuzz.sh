#!/usr/bin/env bash
# Builds the libFuzzer targets with clang (tests/fuzz/) and runs each for
# TONY_FUZZ_SECONDS (default 20) from its seed corpus.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
build=${TONY_FUZZ_BUILD_DIR:-$here/build-fuzz}
if ! command -v clang++ >/dev/null; then
  echo "fuzz.sh: clang++ not found (scripts/setup.sh installs it)" >&2
  exit 1
fi
launcher=()
if command -v ccache >/dev/null; then # as scripts/build.sh
  export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$here} CCACHE_NOHASHDIR=${CCACHE_NOHASHDIR:-1}
  launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
fi
CC=clang CXX=clang++ cmake -S "$here" -B "$build" -G Ninja -DTONY_FUZZ=ON \
  -DTONY_FUZZ_SECONDS="${TONY_FUZZ_SECONDS:-20}" -DTONY_BUILD_BENCH=OFF "${launcher[@]}" >/dev/null
cmake --build "$build" -j "$(nproc)" --target fuzz_rpc_frames fuzz_token_file fuzz_http_request \
  fuzz_job_toml fuzz_tony_xml fuzz_event_log fuzz_aggregated_log
(cd "$build" && ctest -L fuzz --output-on-failure)
