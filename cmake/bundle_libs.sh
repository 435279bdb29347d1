#!/usr/bin/env bash
# Copies every shared library that tony's binaries need, except glibc's own,
# into one directory, so that the binaries (linked with the RPATH
# $ORIGIN/../lib/tony) run on a Linux without Debian's packages: YARN nodes
# get that directory with the binaries (doc/operations.md, "What nodes
# need"). Run by the build (target tony-bundle) after linking.
#
#   cmake/bundle_libs.sh OUT_DIR BINARY...
#
# OUT_DIR ends up holding exactly the libraries of the binaries' closure,
# each under its soname; `sasl2/` with Cyrus SASL's DIGEST-MD5 plug-in when
# they link libsasl2 (it is loaded at run time, not linked: tony points
# libsasl2 there, hadoop/digest_md5.cpp); and `glibc-floor`: the
# newest GLIBC_x.y symbol version any of the binaries, libraries or plug-ins
# needs, which is the oldest glibc they run on. Libraries come from the dynamic linker's cache (ldconfig -p),
# not from OUT_DIR, so a library upgraded on this machine is copied again.
# Exits 1 when a library cannot be found.
set -euo pipefail

out=${1:?usage: bundle_libs.sh OUT_DIR BINARY...}
shift
(($#)) || {
  echo "bundle_libs.sh: no binaries given" >&2
  exit 2
}

# glibc's libraries: every system has its own, matched to its kernel
# interface and its dynamic linker; they are never shipped.
is_glibc() {
  case "$1" in
    ld-linux*.so.* | libc.so.* | libm.so.* | libmvec.so.* | libpthread.so.* | \
      libdl.so.* | librt.so.* | libresolv.so.* | libutil.so.* | libanl.so.* | \
      libnsl.so.1 | libBrokenLocale.so.* | libthread_db.so.* | libc_malloc_debug.so.* | \
      libnss_*.so.* | libcidn.so.* | linux-vdso.so.* | linux-gate.so.*)
      return 0
      ;;
  esac
  return 1
}

# The path of soname $1 in the dynamic linker's cache (64-bit).
cache=$(ldconfig -p)
system_path() {
  awk -v so="$1" '$1 == so && /x86-64|64bit/ {print $NF; exit}' <<<"$cache"
}

declare -A wanted=()
# Adds the libraries $1 needs (but glibc's) to `wanted`.
collect() {
  local bin=$1 listing soname arrow path from
  # A static binary (tony-guard) needs nothing; ldd says so and exits 1.
  if ! listing=$(ldd "$bin" 2>&1); then
    grep -q "not a dynamic executable" <<<"$listing" && return 0
    echo "bundle_libs.sh: ldd $bin failed: $listing" >&2
    exit 1
  fi
  if grep -q "not found" <<<"$listing"; then
    echo "bundle_libs.sh: $bin needs libraries this machine lacks:" >&2
    grep "not found" <<<"$listing" >&2
    exit 1
  fi
  while read -r soname arrow path _; do
    [[ "$arrow" == "=>" && "$path" == /* ]] || continue
    is_glibc "$soname" && continue
    from=$(system_path "$soname")
    # Not in the cache (a library of a non-standard directory): where ldd
    # found it, unless that is the bundle itself.
    [[ -n "$from" ]] || from=$path
    [[ "$from" != "$out"/* ]] || {
      echo "bundle_libs.sh: $soname is only in $out; cannot tell its source" >&2
      exit 1
    }
    wanted[$soname]=$from
  done <<<"$listing"
}

for bin in "$@"; do
  [[ -x "$bin" ]] || {
    echo "bundle_libs.sh: $bin is not an executable file" >&2
    exit 1
  }
  collect "$bin"
done

# Cyrus SASL's DIGEST-MD5 plug-in, from the directory beside libsasl2.
plugins=()
if [[ -n "${wanted[libsasl2.so.2]:-}" ]]; then
  plugin=$(dirname "${wanted[libsasl2.so.2]}")/sasl2/libdigestmd5.so
  [[ -e "$plugin" ]] || {
    echo "bundle_libs.sh: no $plugin: install libsasl2-modules (scripts/setup.sh does)" >&2
    exit 1
  }
  plugins+=("$plugin")
  collect "$plugin"
fi

# Built beside OUT_DIR and swapped in, so a binary started meanwhile finds
# either the old set or the new one (or, in the instant between, the
# system's libraries).
mkdir -p "$(dirname "$out")"
tmp=$(mktemp -d "${out%/}.new.XXXXXX")
chmod 755 "$tmp" # mktemp's 0700 would travel in the archive and the install
trap 'rm -rf "$tmp"' EXIT
for soname in "${!wanted[@]}"; do
  cp -L --preserve=mode "${wanted[$soname]}" "$tmp/$soname"
done
if ((${#plugins[@]})); then
  mkdir -m 755 "$tmp/sasl2"
  for plugin in "${plugins[@]}"; do
    cp -L --preserve=mode "$plugin" "$tmp/sasl2/$(basename "$plugin")"
  done
fi

# The newest glibc symbol version anything here needs.
floor=$(
  for file in "$@" "$tmp"/* "$tmp"/sasl2/*; do
    [[ -f "$file" ]] || continue
    objdump -T "$file" 2>/dev/null | grep -o 'GLIBC_[0-9][0-9.]*' || true
  done | sed 's/^GLIBC_//' | sort -uV | tail -n 1
)
echo "${floor:-unknown}" >"$tmp/glibc-floor"

if [[ -d "$out" ]]; then
  old=$(mktemp -d "${out%/}.old.XXXXXX")
  mv "$out" "$old/dir"
  mv "$tmp" "$out"
  rm -rf "$old"
else
  mv "$tmp" "$out"
fi
trap - EXIT
echo "bundle_libs.sh: ${#wanted[@]} libraries in $out (glibc $floor or newer)"
