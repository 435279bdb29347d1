#!/usr/bin/env bash
# Creates, completes or repairs the Python environment the examples and tests
# use: a virtualenv at $TONY_VENV (default <checkout>/.venv) made from Debian's
# /usr/bin/python3 with system site-packages, so Debian's python3-torch is
# used, plus the PyPI packages of scripts/requirements.txt and this
# checkout's tony package (python/, in development mode).
#
#   scripts/setup-python.sh          make sure the environment is ready
#   scripts/setup-python.sh --check  also re-verify the imports (slow: ~5 s)
#
# Quick when already done: a stamp in the venv records the requirements and
# interpreter it was verified with; the imports are re-checked only when that
# stamp is missing or stale. Concurrent runs serialize on a lock.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
venv=${TONY_VENV:-$here/.venv}
requirements="$here/scripts/requirements.txt"
base_python=${TONY_BASE_PYTHON:-/usr/bin/python3}
force_check=0
[[ "${1:-}" == "--check" ]] && force_check=1

die() {
  echo "setup-python: $*" >&2
  exit 1
}

[[ -x "$base_python" ]] \
  || die "$base_python not found; install Debian's python3 (scripts/setup.sh does)"

stamp="$venv/.tony-stamp"
# What the stamp vouches for: the requirements and the interpreter (a Python
# upgrade by apt invalidates the venv's compiled packages).
want_stamp() {
  cat "$requirements"
  echo "# tony package: $here/python $(cat "$here/python/pyproject.toml" | md5sum | cut -c1-12)"
  echo "# base: $("$base_python" -c 'import sys; print(sys.version.split()[0])')"
  echo "# torch: $(dpkg-query -W -f='${Version}' python3-torch 2>/dev/null || echo none)"
}

fast_path_ok() {
  ((force_check == 0)) && [[ -x "$venv/bin/python3" && -f "$stamp" ]] \
    && cmp -s <(want_stamp) "$stamp" \
    && "$venv/bin/python3" -c '' 2>/dev/null
}
fast_path_ok && exit 0

mkdir -p "$(dirname "$venv")"
lock="${TMPDIR:-/tmp}/tony-venv-$(printf %s "$venv" | md5sum | cut -c1-12).lock"
exec 9>"$lock"
flock -w 900 9 || die "another setup of $venv holds $lock for more than 15 minutes"
# Another run may have finished the work while this one waited.
fast_path_ok && exit 0

if [[ -e "$venv" ]] && ! "$venv/bin/python3" -c '' 2>/dev/null; then
  echo "setup-python: $venv is broken (its interpreter does not start); recreating it"
  rm -rf "$venv"
fi
if [[ ! -x "$venv/bin/python3" ]]; then
  echo "setup-python: creating Python environment $venv"
  "$base_python" -m venv --system-site-packages "$venv" \
    || die "could not create $venv; is Debian's python3-venv installed?"
fi

rm -f "$stamp"
echo "setup-python: installing Python packages into $venv"
pip=("$venv/bin/python3" -m pip install --disable-pip-version-check --no-input -q
  --retries 5 --timeout 60)
# Lines marked "# no-deps" are installed apart, without their dependencies.
with_deps=$(mktemp)
trap 'rm -f "$with_deps"' EXIT
grep -v -- '# no-deps' "$requirements" >"$with_deps"
mapfile -t no_deps < <(grep -- '# no-deps' "$requirements" | sed 's/#.*//; s/[[:space:]]//g')
"${pip[@]}" -r "$with_deps" || die "pip could not install $requirements into $venv"
if ((${#no_deps[@]})); then
  "${pip[@]}" --no-deps "${no_deps[@]}" || die "pip could not install ${no_deps[*]} into $venv"
fi

# The tony package of this checkout, in development mode: edits to python/
# take effect at once. Setuptools comes from Debian (no build isolation, so
# nothing is downloaded for it).
"${pip[@]}" --no-deps --no-build-isolation -e "$here/python" \
  || die "pip could not install $here/python into $venv"

echo "setup-python: verifying the environment"
TF_CPP_MIN_LOG_LEVEL=3 TF_ENABLE_ONEDNN_OPTS=0 "$venv/bin/python3" - <<'PY' || die "verification failed (see above)"
import sys
import numpy
import torch
import torch.distributed as dist
import tensorflow as tf
import tf_keras
import tony
import cloudpickle
import venv_pack

problems = []
if not dist.is_available() or not dist.is_gloo_available():
    problems.append("torch.distributed with gloo is not available")
if not numpy.__version__.startswith("1."):
    problems.append(f"numpy {numpy.__version__} is not 1.x; torch {torch.__version__} needs the numpy 1 ABI")
try:
    torch.from_numpy(numpy.ones(2)).sum()
except Exception as e:  # torch without its numpy bridge
    problems.append(f"torch cannot use numpy: {e}")
if float(tf.reduce_sum(tf.constant([1.0, 2.0]))) != 3.0:
    problems.append("tensorflow computes wrongly")
for p in problems:
    print("setup-python: " + p, file=sys.stderr)
print(f"setup-python: python {sys.version.split()[0]}, torch {torch.__version__}, "
      f"tensorflow {tf.__version__}, tf-keras {tf_keras.__version__}, numpy {numpy.__version__}")
sys.exit(1 if problems else 0)
PY
want_stamp >"$stamp"
echo "setup-python: ready: $venv"
