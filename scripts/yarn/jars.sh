#!/usr/bin/env bash
# Resolves the Apache Hadoop jars that the local YARN cluster runs (see
# pom.xml beside this script) and prints the path of a file holding their
# classpath, one colon-separated line, as the last line on stdout.
#
#   scripts/yarn/jars.sh            resolve (offline first, then online)
#   scripts/yarn/jars.sh --refresh  ignore the cached classpath file
#   scripts/yarn/jars.sh --hadoop-version V   the jars of Hadoop V (default
#                                   $TONY_HADOOP_VERSION, else pom.xml's)
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
version=${TONY_HADOOP_VERSION:-$yarn_default_hadoop_version}
while (($#)); do
  case "$1" in
    --refresh) refresh=1 ;;
    --hadoop-version)
      [[ $# -ge 2 ]] || yarn_die "jars.sh: --hadoop-version needs a Hadoop release, e.g. 3.3.6"
      version=$2
      shift
      ;;
    --hadoop-version=*) version=${1#--hadoop-version=} ;;
    -h | --help)
      sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'
      exit 0
      ;;
    *) yarn_die "jars.sh: unknown argument '$1' (expected --refresh or --hadoop-version V)" ;;
  esac
  shift
done
yarn_check_hadoop_version "$version"

yarn_resolve_classpath "$refresh" "$version"
