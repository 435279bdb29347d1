#!/usr/bin/env bash
# Resolves the Apache Hadoop jars that the local YARN cluster runs (see
# pom.xml beside this script) and prints the path of a file holding their
# classpath, one colon-separated line, as the last line on stdout.
#
#   scripts/yarn/jars.sh            resolve (offline first, then online)
#   scripts/yarn/jars.sh --refresh  ignore the cached classpath file
#
# Maven's local repository (~/.m2, or $TONY_MAVEN_REPO) is the jar cache; the
# classpath file lives in $TONY_YARN_CACHE (default ~/.cache/tony-yarn) and is
# reused only while every jar it names still exists, so a wiped ~/.m2 is
# noticed and filled again. CI can cache both directories.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=scripts/yarn/lib.sh
source "$here/lib.sh"

refresh=0
for arg in "$@"; do
  case "$arg" in
    --refresh) refresh=1 ;;
    -h | --help)
      sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'
      exit 0
      ;;
    *) yarn_die "jars.sh: unknown argument '$arg' (expected --refresh)" ;;
  esac
done

yarn_resolve_classpath "$refresh"
