#!/usr/bin/env bash
# Reruns every benchmark and writes bench/RESULTS.md (see bench/README.md).
#
#   bench/run.sh [--only LIST] [--runs N] [--nodes K] [--keep-out] [--smoke]
#
# LIST is a comma list of the parts (default: all). Times are for this
# 2-core machine with its default runs, measured on trial runs (a busy
# machine takes longer; bench/notes.md):
#   launch     3 tasks, tony / TonY / tf-yarn, N runs each    ~6 min (N=5)
#   scale      8, 32, 64 tasks: the YARN floor (a no-op AM), tony, tony
#              with every type packed (placement = "pack"), TonY (2
#              runs), tf-yarn up to 32 tasks; 3 runs              ~28 min
#              instrumented (bench/timeline.py: out/timeline-scale.txt)
#   scale128   128 tasks on one NodeManager more (its own cluster): the
#              floor and tony, 3 runs, instrumented
#              (out/timeline-scale128.txt)                         ~4 min
#   footprint  one 8 s job per framework, memory sampled        ~2 min
#   failure    kill -9 of a worker's command / executor, tony and TonY,
#              3 runs                                           ~4 min
#   pyenv      16 tasks with the project's Python environment packed
#              (TONY_BENCH_PYENV, default .venv): tony first submit, 2
#              unchanged resubmits, 3 runs without it; TonY once
#                                                    ~15 min (packing ~5)
#   offswitch  launch again with YARN's off-switch pace lifted, 3 runs
#                                                               ~3 min
#   registry   tony-bench-registry at 100, 1,000, 3,000 and 10,000
#              executors (below a file limit of 40,256: at the most
#              that can all wait in the gate, and at the most the
#              limit holds): tony-am's registry door (the spec
#              channel), basp, paced; the 100,000 model  ~3 min
#              (the channel needs 20,064 open files at 10,000, else
#              tony runs at the most that fit)
#   local      the local backend against a shell script, N runs  ~1 min
# Setup on a fresh checkout comes first: the release build (~20 min on an
# idle machine, less with a warm ccache), Maven and pip for the peers, and
# packing bench/.venv into tf-yarn's pex once (~5 min).
#
# --smoke: every part once at its smallest size (scale: 4 tasks; pyenv: a
# tiny virtualenv, 2 tasks; no registry part unless --only names it), to
# check the whole path in ~15 minutes; results in bench/out-smoke/ and
# bench/out-smoke/RESULTS.md, bench/RESULTS.md untouched.
# N is the number of runs per framework of launch and local (default 5).
# K is the number of NodeManagers of the YARN parts' cluster (default 3;
# each on its own loopback address, scripts/yarn/cluster.sh --nodes),
# sized so that 64 tasks and the AMs fit (TONY_YARN_NM_MEMORY_MB and
# TONY_YARN_NM_VCORES override it).
#
# It installs what it needs: builds tony from the committed tree (HEAD,
# exported to bench/.cache/src, plus the working tree's bench/) in
# build-bench (RelWithDebInfo, no sanitizers); resolves TonY 0.4.7 and the
# Hadoop 2.10 client jars with Maven (bench/java); creates bench/.venv with
# tf-yarn 0.7.0 and packs it once for tf-yarn's containers. The YARN parts
# start their own cluster (scripts/yarn/cluster.sh) on TONY_YARN_HOST
# (default 127.0.0.1; its NodeManagers on the K addresses after it), state
# in /tmp/tony-yarn-bench (/tmp/tony-yarn-bench-<host> on another address),
# wait while another cluster holds those ports, and always stop theirs.
set -euo pipefail

bench=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(dirname "$bench")
cache="$bench/.cache"
out="$bench/out"
build="$root/build-bench"
host=${TONY_YARN_HOST:-127.0.0.1}
if [[ $host == 127.0.0.1 ]]; then
  yarn_dir=/tmp/tony-yarn-bench
else
  yarn_dir=/tmp/tony-yarn-bench-$host
fi
only=""
runs=5
nodes=3
keep_out=0
smoke=0
while (($#)); do
  case "$1" in
    --only) only=$2; shift ;;
    --runs) runs=$2; shift ;;
    --nodes) nodes=$2; shift ;;
    --keep-out) keep_out=1 ;;
    --smoke) smoke=1 ;;
    -h | --help) sed -n '2,/^set -euo pipefail$/{/^#/p}' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "run.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
  shift
done
if ((smoke)); then
  runs=1
  out="$bench/out-smoke"
  only=${only:-local,launch,scale,footprint,failure,pyenv,offswitch}
fi
only=${only:-registry,local,launch,scale,scale128,footprint,failure,pyenv,offswitch}
wants() { [[ ",$only," == *",$1,"* ]]; }
say() { echo "[run.sh] $*" >&2; }
yarn_parts="launch scale footprint failure pyenv offswitch"
wants_yarn() {
  local p
  for p in $yarn_parts; do wants "$p" && return 0; done
  return 1
}
for p in ${only//,/ }; do
  [[ " $yarn_parts scale128 registry local " == *" $p "* ]] ||
    { echo "run.sh: unknown part '$p' (see --help)" >&2; exit 2; }
done
[[ $nodes =~ ^[1-9][0-9]*$ ]] || { echo "run.sh: --nodes must be a whole number, not '$nodes'" >&2; exit 2; }
[[ $runs =~ ^[1-9][0-9]*$ ]] || { echo "run.sh: --runs must be a whole number, not '$runs'" >&2; exit 2; }

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
# Which commit measured which part, and when: with --keep-out, RESULTS.md
# says which parts come from an earlier run (report.py).
((keep_out)) || rm -f "$out/parts.tsv"
for p in ${only//,/ }; do
  printf '%s\t%s\t%s\n' "$p" "$(git -C "$root" rev-parse --short HEAD)" \
    "$(date -u '+%Y-%m-%d %H:%M UTC')" >>"$out/parts.tsv"
done
launcher=()
if command -v ccache >/dev/null; then
  launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
  # Paths relative to the checkout, and no build dir in the hash: a build
  # in another checkout (a worktree, the lead's) hits the same cache.
  export CCACHE_BASEDIR="$root" CCACHE_NOHASHDIR=1
fi
cmake -S "$cache/src" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DTONY_SANITIZE=OFF -DTONY_BUILD_TESTS=OFF "${launcher[@]}" >/dev/null
ninja -C "$build" -j2 tony-submit tony-am tony-executor tony-guard tony-bundle \
  tony-bench-registry tony-bench-floor-am >&2
# What a release ships: the binaries without their debug sections (77 MB of
# RelWithDebInfo binaries would otherwise be staged with every job).
mkdir -p "$build/dist"
for b in tony-submit tony-am tony-executor tony-guard tony-bench-floor-am; do
  objcopy --strip-debug "$build/bin/$b" "$build/dist/$b"
done
export TONY_BENCH_BIN="$build/dist" TONY_BENCH_FLOOR_AM="$build/dist/tony-bench-floor-am"

# -- peers -----------------------------------------------------------------------
if wants_yarn; then
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
# A cluster's addresses: the RM and HDFS on $host, its K NodeManagers on
# the K addresses after it (on $host itself with one node).
node_addresses() {
  local prefix=${host%.*} last=${host##*.} i
  if (($1 == 1)); then echo "$host"; return; fi
  for ((i = 1; i <= $1; i++)); do echo "$prefix.$((last + i))"; done
}
# Waits while another cluster listens on the RM's and HDFS' ports of $host
# or on a NodeManager's port of one of the addresses given.
wait_for_ports() {
  local a held
  while :; do
    held=0
    ss -tln | grep -qE "${host//./\\.}:(8030|8031|8032|8033|8088|9000|9870)\b" && held=1
    for a in "$@"; do
      ss -tln | grep -qE "${a//./\\.}:(45454|8040|8042)\b" && held=1
    done
    ((held)) || return 0
    say "another YARN holds the ports of $host (and its nodes); waiting 30 s"
    sleep 30
  done
}
if wants_yarn; then
  wait_for_ports $(node_addresses "$nodes")
  stop_cluster() { "$root/scripts/yarn/cluster.sh" stop --dir "$yarn_dir" >&2 || true; }
  trap stop_cluster EXIT
  # NodeManagers for 64 tasks and two AMs: one user may take 70 % of the
  # default queue, so ~96 GiB and 120 vcores in all (only YARN's
  # accounting: a task here uses a few MiB to ~100 MiB).
  export TONY_YARN_HOST=$host
  # Hadoop's native library in the daemons, as production NodeManagers have
  # it: without it localizing an archive of 30,000 files (pyenv) forks chmod
  # once per file, minutes per node (bench/notes.md).
  export TONY_YARN_NATIVE=1
  export TONY_YARN_NM_MEMORY_MB=${TONY_YARN_NM_MEMORY_MB:-$(((98304 / nodes) > 16384 ? 98304 / nodes : 16384))}
  export TONY_YARN_NM_VCORES=${TONY_YARN_NM_VCORES:-$(((120 + nodes - 1) / nodes > 16 ? (120 + nodes - 1) / nodes : 16))}
  # With HDFS: skein (tf-yarn) cannot stage to file:/// (its Utils.equalFs
  # dereferences the null host of a file:/// URI).
  say "starting YARN on $host ($nodes NodeManager(s) of ${TONY_YARN_NM_MEMORY_MB} MB, ${TONY_YARN_NM_VCORES} vcores) and HDFS in $yarn_dir"
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
  export TONY_BENCH_TFYARN_PYENV="hdfs://$host:9000/user/$(id -un)/envs/bench.pex"

  # What the report says where tf-yarn does not run (bench/notes.md).
  tfyarn_why="tf-yarn above 32 tasks: not run (see bench/notes.md, Launch at scale)"
  tfyarn_pyenv_why="tf-yarn takes a .pex only (see bench/notes.md, A real Python environment)"
  export TONY_BENCH_OUT="$out"
  if ((smoke)); then
    scale_args=(--sizes 4 --runs 1 --retries 0)
    failure_runs=1
    pyenv_args=(--tasks 2 --runs 1 --memory 256m)
  else
    # tf-yarn up to 32 tasks only: see bench/notes.md ("Launch at scale").
    scale_args=(--sizes 8,32,64 --runs 3 --peer-runs 2 --max-size tfyarn=32 --why "$tfyarn_why")
    failure_runs=3
    pyenv_args=(--tasks 16 --runs 2)
  fi
  wants launch && python3 "$bench/bench.py" launch --runs "$runs"
  # Instrumented: each run's containers and every process' CPU
  # (bench/timeline.py), the analysis' evidence in bench/notes.md.
  wants scale && python3 "$bench/timeline.py" run --yarn-dir "$yarn_dir" -- \
    python3 "$bench/bench.py" scale "${scale_args[@]}" >"$out/timeline-scale.txt"
  wants footprint && python3 "$bench/bench.py" footprint
  wants failure && python3 "$bench/bench.py" failure --runs "$failure_runs"
  if wants pyenv; then
    pyenv_src=${TONY_BENCH_PYENV:-$root/.venv}
    if [[ -x "$pyenv_src/bin/python" && -f "$pyenv_src/pyvenv.cfg" ]]; then
      venv=$pyenv_src
      ((smoke)) && venv=tiny
      python3 "$bench/bench.py" pyenv --venv "$venv" --python "$pyenv_src/bin/python" \
        "${pyenv_args[@]}" --peer-runs 1 --frameworks tony,tonyj,tfyarn \
        --tfyarn-skip "$tfyarn_pyenv_why"
    else
      say "pyenv: no virtualenv at $pyenv_src (scripts/setup-python.sh makes it; or set TONY_BENCH_PYENV); skipped"
    fi
  fi
  # Last: it changes the cluster's scheduler settings.
  wants offswitch && python3 "$bench/bench.py" launch --max-offswitch 100 --frameworks tony,tonyj \
    --runs $((smoke ? 1 : 3))
  stop_cluster
  trap - EXIT
fi

# -- 128 tasks on one NodeManager more -------------------------------------------
if wants scale128; then
  big=$((nodes + 1))
  big_dir="$yarn_dir-$big"
  wait_for_ports $(node_addresses "$big")
  stop_big() { "$root/scripts/yarn/cluster.sh" stop --dir "$big_dir" >&2 || true; }
  trap stop_big EXIT
  # 128 tasks of 512 MiB and the AM within one user's share of the queue
  # (70 % of the cluster, vcores counted: 4 x 64 x 0.7 = 179).
  say "starting YARN on $host ($big NodeManagers of 32768 MB, 64 vcores) in $big_dir"
  TONY_YARN_HOST=$host TONY_YARN_NM_MEMORY_MB=32768 TONY_YARN_NM_VCORES=64 \
    PATH="$root/.venv/bin:$PATH" "$root/scripts/yarn/cluster.sh" start --hdfs --nodes "$big" \
    --dir "$big_dir" >/dev/null
  TONY_BENCH_NODES=$big TONY_BENCH_YARN_DIR="$big_dir" TONY_BENCH_OUT="$out" \
    python3 "$bench/timeline.py" run --yarn-dir "$big_dir" -- python3 "$bench/bench.py" scale \
    --sizes "$((smoke ? 4 : 128))" --frameworks floor,tony --runs "$((smoke ? 1 : 3))" \
    >"$out/timeline-scale128.txt"
  stop_big
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
  # at the largest size, two others. Every variant goes through the AM's
  # door as tony-am opens it (am/registry_door.cpp): it keeps two
  # descriptors per executor and 128 for itself, and lets at most half of
  # the rest wait in the gate at once, the oldest closed beyond that (the
  # clients then connect again, as tony-executor does). With 10,000
  # executors that takes a hard limit on open files of 40,256 for all of
  # them to wait at once (a YARN container's is the NodeManager's, commonly
  # 65,536 or more); below it (20,000 on the machine of RESULTS.md, not
  # raisable there) every variant runs at `room`, the most executors whose
  # connections can all wait at once, (limit - 256) / 4, and tony and basp
  # again at `most`, the most the limit holds at all, (limit - 64) / 2,
  # where the gate's cap makes executors connect again. report.py fits its
  # model to the runs without such retries.
  files=$(ulimit -Hn)
  room=10000
  most=10000
  if [[ $files != unlimited ]]; then
    (((files - 256) / 4 < room)) && room=$(((files - 256) / 4 / 100 * 100))
    (((files - 64) / 2 < most)) && most=$(((files - 64) / 2 / 100 * 100))
  fi
  registry() {
    say "  $*"
    "$build/bin/tony-bench-registry" "$@" --json >>"$out/registry.jsonl" ||
      say "  failed (exit $?)"
  }
  ran=""
  for n in 100 1000 3000 10000; do
    ((n > room)) && n=$room
    [[ " $ran " == *" $n "* ]] && continue
    ran="$ran $n"
    for variant in tony basp shared compact slim paced; do
      registry --executors "$n" --variant "$variant"
    done
  done
  for window in 16 256; do
    registry --executors "$room" --variant paced --window "$window"
  done
  if ((most > room)); then
    for variant in tony basp; do
      registry --executors "$most" --variant "$variant"
    done
  fi
fi
if wants local; then
  say "local backend"
  TONY_BENCH_OUT="$out" python3 "$bench/bench.py" local --runs "$runs"
fi

results="$bench/RESULTS.md"
((smoke)) && results="$out/RESULTS.md"
TONY_BENCH_OUT="$out" python3 "$bench/report.py" >"$results"
say "wrote $results"
