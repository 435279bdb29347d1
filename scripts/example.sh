#!/usr/bin/env bash
# Sets up this machine, builds tony, and runs an example job on the local
# backend (default: the PyTorch DDP example).
#
#   scripts/example.sh [pytorch|tensorflow|tensorflow-ps|generic] [tony-submit args...]
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
example=${1:-pytorch}
[[ $# -gt 0 ]] && shift
if [[ ! -f "$here/examples/$example/job.toml" ]]; then
  echo "example.sh: no example '$example' (try: $(ls "$here/examples" | tr '\n' ' '))" >&2
  exit 2
fi

"$here/scripts/setup.sh"
build=${TONY_BUILD_DIR:-$here/build}
TONY_BUILD_DIR="$build" "$here/scripts/build.sh" -DTONY_BUILD_TESTS=OFF -DTONY_BUILD_BENCH=OFF >/dev/null

export PATH="${TONY_VENV:-$here/.venv}/bin:$PATH"
exec "$build/bin/tony-submit" "$@" "$here/examples/$example/job.toml"
