#!/usr/bin/env bash
# Reruns every benchmark and writes bench/RESULTS.md (see bench/README.md).
#
#   bench/run.sh [--only LIST] [--runs N] [--nodes K] [--keep-out]
#
# LIST is a comma list of: registry, local, launch, footprint, failure,
# offswitch (default: all). N is the number of runs per framework (default 5).
# K is the number of NodeManagers of the YARN parts' cluster (default 1;
# each on its own loopback address, scripts/yarn/cluster.sh --nodes).
# The registry part is 22 runs of tony-bench-registry, about 5 minutes on 2
# cores (each 10,000-executor run 10-20 s; tony's spec channel needs 20,064
# open files at 10,000, else tony runs at the most that fit).
#
# It installs what it needs: builds tony from the committed tree (HEAD,
# exported to bench/.cache/src, plus the working tree's bench/) in
# build-bench (RelWithDebInfo, no sanitizers); resolves TonY 0.4.7 and the
# Hadoop 2.10 client jars with Maven (bench/java); creates bench/.venv with
# tf-yarn 0.7.0 and packs it once for tf-yarn's containers. The YARN parts
# start their own single-machine cluster (scripts/yarn/cluster.sh, state in
# /tmp/tony-yarn-bench), wait while another cluster holds the ports, and
# always stop theirs.
set -euo pipefail

bench=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(dirname "$bench")
cache="$bench/.cache"
out="$bench/out"
build="$root/build-bench"
yarn_dir=/tmp/tony-yarn-bench
only="registry,local,launch,footprint,failure,offswitch"
runs=5
nodes=1
keep_out=0
while (($#)); do
  case "$1" in
    --only) only=$2; shift ;;
    --runs) runs=$2; shift ;;
    --nodes) nodes=$2; shift ;;
    --keep-out) keep_out=1 ;;
    -h | --help) sed -n '2,21p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "run.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
  shift
done
wants() { [[ ",$only," == *",$1,"* ]]; }
say() { echo "[run.sh] $*" >&2; }

mkdir -p "$cache" "$out"
((keep_out)) || rm -f "$out"/*.jsonl
rm -rf "$out/runs"

# -- build ----------------------------------------------------------------------
say "building tony $(git -C "$root" rev-parse --short HEAD) in $build"
# Only files whose content changed are rewritten, so ninja rebuilds only
# what changed since the last run.
rm -rf "$cache/src.new"
mkdir -p "$cache/src.new/bench" "$cache/src"
git -C "$root" archive HEAD | tar -x -C "$cache/src.new"
cp "$bench/CMakeLists.txt" "$bench"/*.cpp "$cache/src.new/bench/"
python3 - "$cache/src.new" "$cache/src" <<'PY'
import filecmp, os, shutil, sys
new, old = sys.argv[1], sys.argv[2]
keep = set()
for d, _, files in os.walk(new):
    for f in files:
        rel = os.path.relpath(os.path.join(d, f), new)
        keep.add(rel)
        dst = os.path.join(old, rel)
        if not os.path.exists(dst) or not filecmp.cmp(os.path.join(d, f), dst, shallow=False):
            os.makedirs(os.path.dirname(dst), exist_ok=True)
            shutil.copy(os.path.join(d, f), dst)
for d, _, files in os.walk(old):
    for f in files:
        rel = os.path.relpath(os.path.join(d, f), old)
        if rel not in keep and rel != "COMMIT":
            os.remove(os.path.join(d, f))
PY
rm -rf "$cache/src.new"
git -C "$root" rev-parse HEAD >"$cache/src/COMMIT"
launcher=()
command -v ccache >/dev/null &&
  launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
cmake -S "$cache/src" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DTONY_SANITIZE=OFF -DTONY_BUILD_TESTS=OFF "${launcher[@]}" >/dev/null
ninja -C "$build" -j2 tony-submit tony-am tony-executor tony-guard tony-bench-registry >&2
# What a release ships: the binaries without their debug sections (77 MB of
# RelWithDebInfo binaries would otherwise be staged with every job).
mkdir -p "$build/dist"
for b in tony-submit tony-am tony-executor tony-guard; do
  objcopy --strip-debug "$build/bin/$b" "$build/dist/$b"
done
export TONY_BENCH_BIN="$build/dist"

# -- peers -----------------------------------------------------------------------
if wants launch || wants footprint || wants failure || wants offswitch; then
  say "resolving TonY 0.4.7 and the Hadoop 2.10 client jars (Maven)"
  rm -rf "$cache/tony-java"
  mvn -q -B -f "$bench/java/pom.xml" dependency:copy-dependencies \
    -DoutputDirectory="$cache/tony-java" >&2
  mvn -q -B -f "$bench/java/hadoop2/pom.xml" dependency:build-classpath \
    -Dmdep.outputFile="$cache/hadoop2-classpath.txt" >&2
  export TONY_BENCH_TONY_JARS="$cache/tony-java" TONY_BENCH_HADOOP2_CP="$cache/hadoop2-classpath.txt"

  if [[ ! -x "$bench/.venv/bin/python" ]]; then
    say "creating bench/.venv with tf-yarn 0.7.0"
    python3 -m venv "$bench/.venv"
  fi
  "$bench/.venv/bin/pip" install -q tf-yarn==0.7.0 >&2
  export TONY_BENCH_VENV="$bench/.venv"
fi

# -- YARN ----------------------------------------------------------------------------
if wants launch || wants footprint || wants failure || wants offswitch; then
  while ss -tan | grep -qE '127\.0\.0\.1:(8030|8031|8032|8033|8088|45454|8040|8042|9000|9870)\b'; do
    say "another YARN holds the ports; waiting 30 s"
    sleep 30
  done
  stop_cluster() { "$root/scripts/yarn/cluster.sh" stop --dir "$yarn_dir" >&2 || true; }
  trap stop_cluster EXIT
  # With HDFS: skein (tf-yarn) cannot stage to file:/// (its Utils.equalFs
  # dereferences the null host of a file:/// URI).
  say "starting YARN ($nodes NodeManager(s)) and HDFS in $yarn_dir"
  PATH="$root/.venv/bin:$PATH" "$root/scripts/yarn/cluster.sh" start --hdfs --nodes "$nodes" \
    --dir "$yarn_dir" >/dev/null
  export TONY_BENCH_NODES=$nodes
  export TONY_BENCH_YARN_DIR="$yarn_dir"

  pex="$cache/envs/bench.pex"
  if [[ ! -s "$pex" ]]; then
    say "packing bench/.venv for tf-yarn (once; minutes)"
    mkdir -p "$cache/envs"
    HADOOP_CONF_DIR="$yarn_dir/conf" PATH="$bench/peers/bin:$bench/.venv/bin:$PATH" \
      "$bench/.venv/bin/python" "$bench/peers/tfyarn_job.py" --package "$pex" >&2
  fi
  # Uploaded once per cluster, as tf-yarn's upload_env does on a real one.
  "$root/scripts/yarn/yarn.sh" --dir "$yarn_dir" dfs -mkdir -p "/user/$(id -un)/envs"
  "$root/scripts/yarn/yarn.sh" --dir "$yarn_dir" dfs -put -f "$pex" "/user/$(id -un)/envs/bench.pex"
  export TONY_BENCH_TFYARN_PYENV="hdfs://127.0.0.1:9000/user/$(id -un)/envs/bench.pex"

  wants launch && python3 "$bench/bench.py" launch --runs "$runs"
  wants footprint && python3 "$bench/bench.py" footprint
  wants failure && python3 "$bench/bench.py" failure --runs 3
  # Last: it changes the cluster's scheduler settings.
  wants offswitch && python3 "$bench/bench.py" launch --max-offswitch 100 --frameworks tony,tonyj --runs 3
  stop_cluster
  trap - EXIT
fi

# -- no cluster needed ------------------------------------------------------------
# After YARN: 10,000 loopback connections leave ephemeral ports in TIME_WAIT
# for a minute, and one of them can be a port the cluster binds (45454).
if wants registry; then
  say "registry scale"
  # tony: tony-am's registry door, the spec channel (bench/README.md); basp:
  # the same registry over BASP (its fallback, and tony before the channel);
  # the prototypes, paced at its default window (64 specs in progress) and,
  # at the largest size, two others. The spec channel holds two descriptors
  # per executor in the AM: where the hard limit on open files is below
  # 20,064 (20,000 on the machine of RESULTS.md, and not raisable there)
  # tony's largest run takes as many executors as fit, and basp and paced
  # run at that size too, side by side.
  files=$(ulimit -Hn)
  most=10000
  if [[ $files != unlimited ]] && (((files - 64) / 2 < most)); then
    most=$(((files - 64) / 2 / 100 * 100))
  fi
  registry() {
    say "  $*"
    "$build/bin/tony-bench-registry" "$@" --json >>"$out/registry.jsonl" ||
      say "  failed (exit $?)"
  }
  for n in 100 1000 10000; do
    for variant in tony basp shared compact slim paced; do
      m=$n
      [[ $variant == tony ]] && ((m > most)) && m=$most
      registry --executors "$m" --variant "$variant"
    done
  done
  if ((most < 10000)); then
    registry --executors "$most" --variant basp
    registry --executors "$most" --variant paced
  fi
  for window in 16 256; do
    registry --executors 10000 --variant paced --window "$window"
  done
fi
if wants local; then
  say "local backend"
  python3 "$bench/bench.py" local --runs "$runs"
fi

python3 "$bench/report.py" >"$bench/RESULTS.md"
say "wrote $bench/RESULTS.md"
