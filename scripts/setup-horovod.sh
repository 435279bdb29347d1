#!/usr/bin/env bash
# Horovod (gloo and PyTorch, no MPI, no TensorFlow) in the Python environment
# of the tests ($TONY_VENV, default <checkout>/.venv), for the Horovod tests
# (doc/testing.md). PyPI has only Horovod's source; it compiles C++ (gloo,
# its collectives, the torch extension) against Debian's torch 1.13: about
# 50 minutes on two busy cores. So:
#
#   scripts/setup-horovod.sh          install the wheel cached in
#                                     $TONY_WHEEL_CACHE (~/.cache/tony-wheels)
#                                     when there; otherwise say the Horovod
#                                     tests will be skipped, and exit 0
#   scripts/setup-horovod.sh --build  build the wheel into the cache first
#                                     when it is missing, then install it
#
# A build that fails exits non-zero with pip's output in $TONY_WHEEL_CACHE/
# horovod-build.log. Concurrent runs serialize on a lock.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
venv=${TONY_VENV:-$here/.venv}
cache=${TONY_WHEEL_CACHE:-$HOME/.cache/tony-wheels}
version=0.28.1
build=0
[[ "${1:-}" == "--build" ]] && build=1

say() { echo "setup-horovod: $*"; }

[[ -x "$venv/bin/python3" ]] || { say "no Python environment at $venv; run scripts/setup-python.sh first" >&2; exit 1; }
installed() {
  "$venv/bin/python3" -c "import horovod, horovod.torch as h; assert horovod.__version__ == '$version' and h.gloo_built()" 2>/dev/null
}
installed && { say "Horovod $version with gloo is installed"; exit 0; }

mkdir -p "$cache"
exec 9>"$cache/.horovod.lock"
flock -w 7200 9 || { say "another build holds $cache/.horovod.lock" >&2; exit 1; }

wheel=$(ls "$cache"/horovod-"$version"-*.whl 2>/dev/null | head -1 || true)
if [[ -z "$wheel" ]]; then
  if ((build == 0)); then
    say "no cached wheel in $cache: the Horovod tests will be skipped (exit 77, saying so);"
    say "scripts/setup-horovod.sh --build builds one (about 50 minutes on two cores)"
    exit 0
  fi
  # Debian's python3-torch has no C++ headers: Horovod's torch extension
  # needs libtorch-dev (torch/extension.h) and pybind11-dev, which the
  # headers include.
  torch_inc=$("$venv/bin/python3" -c 'import os, torch; print(os.path.dirname(torch.__file__))')/include
  [[ -f "$torch_inc/torch/extension.h" && -f /usr/include/pybind11/pybind11.h ]] \
    || { say "PyTorch's C++ headers are missing: apt-get install libtorch-dev pybind11-dev first" >&2; exit 1; }
  say "building Horovod $version (gloo, PyTorch $("$venv/bin/python3" -c 'import torch; print(torch.__version__)')) into $cache"
  # Debian's torch is seen only without build isolation; one compiler at a
  # time keeps the machine usable.
  HOROVOD_WITH_PYTORCH=1 HOROVOD_WITH_GLOO=1 HOROVOD_WITHOUT_MPI=1 \
  HOROVOD_WITHOUT_TENSORFLOW=1 HOROVOD_WITHOUT_MXNET=1 HOROVOD_CPU_OPERATIONS=GLOO \
  MAKEFLAGS=${MAKEFLAGS:--j1} PATH="$venv/bin:$PATH" \
    "$venv/bin/pip" wheel --no-deps --no-build-isolation -w "$cache" "horovod==$version" \
    >"$cache/horovod-build.log" 2>&1 \
    || { say "the build failed; see $cache/horovod-build.log" >&2; tail -20 "$cache/horovod-build.log" >&2; exit 1; }
  wheel=$(ls "$cache"/horovod-"$version"-*.whl | head -1)
fi
say "installing $wheel"
"$venv/bin/pip" install -q --no-deps "$wheel"
installed || { say "Horovod was installed but does not import with gloo" >&2; exit 1; }
say "Horovod $version with gloo is installed"
