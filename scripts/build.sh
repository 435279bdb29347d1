#!/usr/bin/env bash
# Configures and builds tony into $TONY_BUILD_DIR (default build/).
#   scripts/build.sh [--sanitize] [extra cmake args...]
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
build=${TONY_BUILD_DIR:-$here/build}
args=()
if [[ "${1:-}" == "--sanitize" ]]; then
  shift
  build=${TONY_BUILD_DIR:-$here/build-asan}
  args+=(-DTONY_SANITIZE=ON -DCMAKE_BUILD_TYPE=Debug)
fi
# ccache, when installed, makes rebuilds in fresh clones and worktrees cheap.
# Paths are hashed relative to the checkout, so one clone's objects serve
# another's.
if command -v ccache >/dev/null; then
  export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$here} CCACHE_NOHASHDIR=${CCACHE_NOHASHDIR:-1}
  args+=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
fi
cmake -S "$here" -B "$build" -G Ninja "${args[@]}" "$@" >/dev/null
cmake --build "$build" -j "$(nproc)"
echo "$build"
