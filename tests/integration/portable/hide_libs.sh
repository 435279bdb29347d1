#!/usr/bin/env bash
# Runs a command on a node that lacks tony's Debian libraries: in a mount
# namespace of its own, the system's library directory shows every file but
# the libraries tony bundles (<build>/lib/tony), so a tony binary that still
# needed one from the system would fail to start ("error while loading
# shared libraries"). What the namespace's other programs need stays: the
# JVM of a NodeManager and its libraries, bash, coreutils, tar and gzip
# (the NodeManager's launch scripts and localizer), so the libraries both
# sides need (libstdc++, libz, ...) remain visible and the test checks
# instead that tony's processes map them from the bundle. Cyrus SASL's
# plug-in directory (sasl2/) is hidden whole: only tony loads from it.
#
#   hide_libs.sh SCRATCH BUNDLE CMD [ARGS...]
#
# SCRATCH: a directory (made if missing) the namespace mounts its view on;
# it stays empty outside. BUNDLE: the library directory of the build. The
# command runs in place of this script (exec), with the list of hidden
# files in $TONY_HIDDEN_LIBS (space separated). Needs root (mount); exits
# 77 without it.
set -euo pipefail

scratch=${1:?usage: hide_libs.sh SCRATCH BUNDLE CMD...}
bundle=${2:?usage: hide_libs.sh SCRATCH BUNDLE CMD...}
shift 2
(($#)) || {
  echo "hide_libs.sh: no command" >&2
  exit 2
}
libdir=/usr/lib/x86_64-linux-gnu

if [[ -z "${TONY_HIDE_LIBS_INSIDE:-}" ]]; then
  if [[ $(id -u) -ne 0 ]] || ! command -v unshare >/dev/null; then
    echo "hide_libs.sh: needs root and unshare (util-linux) for a mount namespace" >&2
    exit 77
  fi
  [[ -d "$libdir" && -d "$bundle" ]] || {
    echo "hide_libs.sh: no $libdir or no bundle $bundle" >&2
    exit 2
  }
  mkdir -p "$scratch"
  exec unshare -m --propagation private env TONY_HIDE_LIBS_INSIDE=1 "$0" "$scratch" "$bundle" "$@"
fi
unset TONY_HIDE_LIBS_INSIDE

# Libraries of what keeps running in the namespace besides tony.
needed_by_others() {
  local java java_home bin
  local -a files=()
  if java=$(command -v java); then
    java_home=$(dirname "$(dirname "$(readlink -f "$java")")")
    files+=("$java" "$java_home"/lib/*.so "$java_home"/lib/server/libjvm.so)
  fi
  for bin in $(dpkg -L bash dash coreutils util-linux tar gzip findutils procps 2>/dev/null |
    grep -E '/s?bin/[^/]+$'); do
    [[ -f "$bin" && -x "$bin" ]] && files+=("$bin")
  done
  ldd "${files[@]}" 2>/dev/null | awk '$2 == "=>" {print $1}' | sort -u || true
}

declare -A keep=()
while read -r soname; do
  [[ -n "$soname" ]] && keep[$soname]=1
done < <(needed_by_others)

# The files to hide: each bundled soname and the file it resolves to.
declare -A hide=()
for lib in "$bundle"/*.so*; do
  soname=$(basename "$lib")
  [[ -n "${keep[$soname]:-}" ]] && continue
  [[ -e "$libdir/$soname" || -L "$libdir/$soname" ]] || continue
  hide[$soname]=1
  target=$(readlink -f "$libdir/$soname")
  [[ "$(dirname "$target")" == "$libdir" ]] && hide[$(basename "$target")]=1
done

[[ -d "$libdir/sasl2" ]] && hide[sasl2]=1

mount -t tmpfs tony-hidden-libs "$scratch"
mkdir "$scratch/real" "$scratch/view"
mount --bind "$libdir" "$scratch/real"
ln -s -t "$scratch/view" "$scratch/real"/*
for name in "${!hide[@]}"; do
  rm -f "$scratch/view/$name"
done
mount --bind "$scratch/view" "$libdir"
TONY_HIDDEN_LIBS="${!hide[*]}"
export TONY_HIDDEN_LIBS
exec "$@"
