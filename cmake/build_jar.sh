#!/usr/bin/env bash
# Builds tony-cli-<version>-all.jar (compat/java) with Maven and copies it
# to OUT. Run by the build (target tony-cli-jar) when TONY_BUILD_JAR is on.
#
#   cmake/build_jar.sh POM_DIR WORK_DIR VERSION OUT
#
# Offline first: with a warm Maven repository (~/.m2, or $TONY_MAVEN_REPO,
# as scripts/yarn uses) this makes no network round trip; a cold one is
# filled from Maven Central once (the build plug-ins and what they need,
# under 20 MB).
set -euo pipefail
pom_dir=${1:?usage: build_jar.sh POM_DIR WORK_DIR VERSION OUT}
work=${2:?usage: build_jar.sh POM_DIR WORK_DIR VERSION OUT}
version=${3:?usage: build_jar.sh POM_DIR WORK_DIR VERSION OUT}
out=${4:?usage: build_jar.sh POM_DIR WORK_DIR VERSION OUT}
args=(-B -q -Dstyle.color=never -f "$pom_dir/pom.xml" "-Drevision=$version"
  "-Dtony.jar.build=$work" package)
[[ -n "${TONY_MAVEN_REPO:-}" ]] && args=("-Dmaven.repo.local=$TONY_MAVEN_REPO" "${args[@]}")
mkdir -p "$work"
log="$work/mvn.log"
if ! mvn -o "${args[@]}" >"$log" 2>&1; then
  if ! mvn "${args[@]}" >"$log" 2>&1; then
    tail -n 30 "$log" >&2
    echo "build_jar.sh: Maven could not build $pom_dir (full log: $log); configure with" \
      "-DTONY_BUILD_JAR=OFF to build tony without TonY's jar" >&2
    exit 1
  fi
fi
mkdir -p "$(dirname "$out")"
cp -f "$work/tony-cli-$version-all.jar" "$out"
