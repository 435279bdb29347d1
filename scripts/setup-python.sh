#!/usr/bin/env bash
# Creates (or completes) the Python environment the examples and tests use:
# a virtualenv at $TONY_VENV (default <checkout>/.venv) from /usr/bin/python3
# with system site-packages (Debian's python3-torch), plus PyPI packages.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
venv=${TONY_VENV:-$here/.venv}
requirements="$here/scripts/requirements.txt"

if [[ ! -x "$venv/bin/python3" ]]; then
  echo "setup: creating Python environment $venv"
  /usr/bin/python3 -m venv --system-site-packages "$venv"
fi
stamp="$venv/.tony-requirements"
if [[ ! -f "$stamp" ]] || ! cmp -s "$requirements" "$stamp"; then
  echo "setup: installing Python packages into $venv"
  "$venv/bin/pip" install --disable-pip-version-check -q -r "$requirements"
  cp "$requirements" "$stamp"
fi
"$venv/bin/python3" -c "import torch, tensorflow" 2>/dev/null \
  || { echo "setup: torch or tensorflow does not import in $venv" >&2; exit 1; }
