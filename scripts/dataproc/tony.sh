#!/usr/bin/env bash
# tony's Dataproc initialization action (doc/dataproc.md, "2. Installing tony
# on the nodes"). Dataproc runs it as root on every node of a new cluster:
#
#   gcloud dataproc clusters create NAME ... \
#     --initialization-actions gs://BUCKET/tony.sh \
#     --metadata tony-bundle=gs://BUCKET/tony-<version>.tar.gz
#
# On every node it unpacks tony's node bundle (a tarball of `cmake --install`
# output: bin/, lib/tony/, lib/tony-cli-<version>-all.jar) as /opt/tony/TonY
# and writes /etc/profile.d/tony.sh (TONY_HOME, PATH). On the master
# (dataproc-role "Master") it also links tony-submit, ytf-submit and
# tony-history into /usr/local/bin (and /opt/tony/bin to TonY/bin, where
# the samples' jar finds tony-submit) and lays out /opt/tony/TonY-samples as
# TonY's action does: tony-cli-<version>-all.jar, jobs/TFJob and
# jobs/PTJob (tony.xml, src/mnist_distributed.py) and deps/tf.zip,
# deps/pytorch.zip.
#
# Metadata (instance attributes, read with /usr/share/google/get_metadata_value
# or, when TONY_GET_METADATA names another command, with that one):
#   dataproc-role        Master or Worker (set by Dataproc); TONY_DATAPROC_ROLE
#                        overrides it
#   tony-bundle          required: the bundle's path, file://, http(s):// or
#                        gs:// URL
#   tf_version           TensorFlow version pip installs into deps/tf.zip
#   torch_version        PyTorch version pip installs into deps/pytorch.zip
#   torchvision_version  torchvision version installed beside it
#   worker_instances, worker_memory, ps_instances, ps_memory
#                        the samples' tony.xml values (defaults 2, 1g, 0, 1g)
# Without tf_version / torch_version the deps archives run the node's own
# python3 (with whatever it has installed), and nothing is downloaded.
#
# Running it again is harmless: an unchanged bundle is not unpacked again,
# links and samples are written again.
#
# Exit codes: 0 done; 2 bad metadata (no or unknown role, no tony-bundle, a
# malformed value); 3 the bundle cannot be fetched, unpacked or is not
# tony's, or the node's glibc is older than the bundle needs; 4 a Python
# environment asked for with tf_version / torch_version cannot be built.
set -euo pipefail

PREFIX=${TONY_DATAPROC_PREFIX:-/opt/tony}
INSTALL="$PREFIX/TonY"
SAMPLES="$PREFIX/TonY-samples"
BIN_LINKS=${TONY_DATAPROC_BIN_DIR:-/usr/local/bin}
PROFILE=${TONY_DATAPROC_PROFILE:-/etc/profile.d/tony.sh}

log() { echo "tony.sh: $*" >&2; }
fail() {
  local code=$1
  shift
  log "error: $*"
  exit "$code"
}

# The value of metadata attribute $1, empty when it is not set.
metadata() {
  local getter=${TONY_GET_METADATA:-/usr/share/google/get_metadata_value}
  if [[ ! -x "$getter" ]]; then
    getter=$(command -v get_metadata_value || true)
    [[ -n "$getter" ]] || return 0
  fi
  "$getter" "attributes/$1" 2> /dev/null || true
}

node_role() {
  local role=${TONY_DATAPROC_ROLE:-$(metadata dataproc-role)}
  case "$role" in
    Master | Worker) echo "$role" ;;
    "") fail 2 "no dataproc-role in the instance metadata (Dataproc sets it to Master or Worker; set TONY_DATAPROC_ROLE to run this elsewhere)" ;;
    *) fail 2 "dataproc-role is '$role'; expected Master or Worker" ;;
  esac
}

# Metadata $1 or default $2, checked against regex $3.
knob() {
  local v
  v=$(metadata "$1")
  v=${v:-$2}
  [[ -z "$v" || "$v" =~ $3 ]] || fail 2 "metadata $1='$v' is malformed (expected $3)"
  echo "$v"
}

fetch_bundle() {
  local src=$1 out=$2
  case "$src" in
    gs://*)
      if command -v gsutil > /dev/null; then
        gsutil -q cp "$src" "$out"
      else
        gcloud storage cp "$src" "$out"
      fi || fail 3 "cannot copy the bundle $src (gsutil/gcloud failed; does the cluster's service account read the bucket?)" ;;
    http://* | https://*)
      curl -fsSL --retry 3 -o "$out" "$src" || fail 3 "cannot download the bundle $src" ;;
    file://* | /*)
      # cp's own words: a missing file and a full disk need different fixes.
      local path=${src#file://} why
      why=$(cp "$path" "$out" 2>&1) || fail 3 "cannot copy the bundle $path to $out: ${why:-cp failed}" ;;
    *) fail 2 "metadata tony-bundle='$src': give an absolute path, a file://, http(s):// or gs:// URL" ;;
  esac
}

# tar, or Python's tarfile where tar is missing or cannot run the
# decompressor (a node without gzip or xz).
untar() {
  if command -v tar > /dev/null && tar -xf "$1" -C "$2"; then
    return 0
  fi
  rm -rf "${2:?}" && mkdir "$2"
  python3 -m tarfile -e "$1" "$2"
}

glibc_ok() {
  local floor=$1 have
  have=$(getconf GNU_LIBC_VERSION 2> /dev/null || true)
  have=${have##* }
  [[ -n "$have" ]] || return 0
  [[ "$(printf '%s\n%s\n' "$floor" "$have" | sort -V | head -n1)" == "$floor" ]]
}

install_bundle() {
  local src=$1 work sum
  mkdir -p "$PREFIX"
  work=$(mktemp -d "$PREFIX/.bundle.XXXXXX")
  # shellcheck disable=SC2064
  trap "rm -rf '$work'" EXIT
  fetch_bundle "$src" "$work/bundle.tar.gz"
  sum=$(sha256sum "$work/bundle.tar.gz" | cut -d' ' -f1)
  if [[ -f "$INSTALL/.bundle-sha256" && "$(cat "$INSTALL/.bundle-sha256")" == "$sum" ]]; then
    log "the bundle in $INSTALL is already $src ($sum)"
    return 0
  fi
  mkdir "$work/tree"
  untar "$work/bundle.tar.gz" "$work/tree" 2> "$work/untar.err" ||
    fail 3 "the bundle $src is not a tarball (tar, gzip or xz): $(tail -n 2 "$work/untar.err" | tr '\n' ' ')"
  local b
  for b in tony-submit tony-am tony-executor; do
    [[ -x "$work/tree/bin/$b" ]] ||
      fail 3 "the bundle $src has no bin/$b: make it with 'cmake --install BUILD --prefix DIR && tar -C DIR -czf tony.tar.gz .'"
  done
  if [[ -f "$work/tree/lib/tony/glibc-floor" ]]; then
    local floor
    floor=$(cat "$work/tree/lib/tony/glibc-floor")
    glibc_ok "$floor" ||
      fail 3 "the bundle needs glibc $floor; this node has $(getconf GNU_LIBC_VERSION) (doc/operations.md, 'The glibc floor')"
  fi
  echo "$sum" > "$work/tree/.bundle-sha256"
  rm -rf "$INSTALL.old"
  [[ -e "$INSTALL" ]] && mv "$INSTALL" "$INSTALL.old"
  mv "$work/tree" "$INSTALL"
  rm -rf "$INSTALL.old"
  log "installed tony from $src in $INSTALL"
}

write_profile() {
  mkdir -p "$(dirname "$PROFILE")"
  cat > "$PROFILE" << PROFILE_END
# tony (written by tony's Dataproc initialization action)
export TONY_HOME=$INSTALL
case ":\$PATH:" in *":$INSTALL/bin:"*) ;; *) PATH="\$PATH:$INSTALL/bin" ;; esac
PROFILE_END
}

link_commands() {
  mkdir -p "$BIN_LINKS"
  local b
  for b in tony-submit ytf-submit tony-history; do
    [[ -e "$INSTALL/bin/$b" ]] && ln -sfn "$INSTALL/bin/$b" "$BIN_LINKS/$b"
  done
  # The samples' jar looks for tony-submit in its directory's ../bin.
  ln -sfn TonY/bin "$PREFIX/bin"
}

# -- the samples (master) ------------------------------------------------------------

# The part both samples share: the data, made here (no download), and the
# stand-in model trained when the framework is not installed and
# --standin is given.
sample_common() {
  cat << 'PY_END'
import argparse
import json
import math
import os
import random
import sys


def synthetic_mnist(n, seed):
    """n 8x8 "digits": ten fixed prototypes with noise, made at run time."""
    proto_rnd = random.Random(1234)
    protos = [[1.0 if proto_rnd.random() < 0.3 else 0.0 for _ in range(64)] for _ in range(10)]
    rnd = random.Random(seed)
    xs, ys = [], []
    for _ in range(n):
        y = rnd.randrange(10)
        xs.append([min(1.0, max(0.0, p + rnd.gauss(0.0, 0.25))) for p in protos[y]])
        ys.append(y)
    return xs, ys


def standin_train(xs, ys, txs, tys, epochs, lr=0.5):
    """Softmax regression in plain Python; returns the test accuracy."""
    w = [[0.0] * 64 for _ in range(10)]
    b = [0.0] * 10
    def scores(x):
        return [sum(wi * xi for wi, xi in zip(w[k], x)) + b[k] for k in range(10)]
    for _ in range(epochs):
        for x, y in zip(xs, ys):
            s = scores(x)
            m = max(s)
            e = [math.exp(v - m) for v in s]
            z = sum(e)
            for k in range(10):
                g = e[k] / z - (1.0 if k == y else 0.0)
                b[k] -= lr * g / 10
                row = w[k]
                for i in range(64):
                    row[i] -= lr * g * x[i] / 10
    right = sum(1 for x, y in zip(txs, tys) if max(range(10), key=lambda k: scores(x)[k]) == y)
    return right / len(tys)


def task():
    return os.environ.get("JOB_NAME", "worker"), int(os.environ.get("TASK_INDEX", "0"))


def missing(framework, what, args):
    if args.standin:
        return False
    print(f"mnist_distributed: {framework} is not installed in {sys.executable} ({what}): "
          f"build the samples' environment with the {framework[:5]}_version metadata, "
          "or add --standin to --task_params to train the stand-in model", file=sys.stderr)
    sys.exit(3)


def report(framework, accuracy, out_dir, replicas=1):
    """Prints the result and writes it as <job>-<index>.json in out_dir;
    replicas: how many workers trained the one model together."""
    job, index = task()
    line = f"mnist_distributed: {job}:{index} trained with {framework}, test accuracy {accuracy:.3f}"
    print(line, flush=True)
    if out_dir:
        os.makedirs(out_dir, exist_ok=True)
        with open(os.path.join(out_dir, f"{job}-{index}.json"), "w") as f:
            json.dump({"framework": framework, "accuracy": accuracy, "replicas": replicas}, f)
PY_END
}

tf_sample() {
  sample_common
  cat << 'PY_END'


def train_tf(args, xs, ys, txs, tys):
    import tensorflow as tf
    job, index = task()
    spec = json.loads(os.environ.get("CLUSTER_SPEC", "{}"))
    workers = spec.get("worker", [])
    if job == "ps":
        tf.distribute.Server(tf.train.ClusterSpec(spec), job_name="ps", task_index=index).join()
        return None
    strategy = tf.distribute.get_strategy()
    if len(workers) > 1:
        resolver = tf.distribute.cluster_resolver.SimpleClusterResolver(
            tf.train.ClusterSpec({"worker": workers}), task_type="worker", task_id=index,
            rpc_layer="grpc")
        strategy = tf.distribute.MultiWorkerMirroredStrategy(cluster_resolver=resolver)
    with strategy.scope():
        mean = tf.VariableAggregation.MEAN
        w = tf.Variable(tf.zeros([64, 10]), aggregation=mean)
        b = tf.Variable(tf.zeros([10]), aggregation=mean)
    x, y = tf.constant(xs, tf.float32), tf.constant(ys, tf.int64)

    @tf.function
    def step():
        def replica():
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(
                    y, tf.matmul(x, w) + b))
            gw, gb = tape.gradient(loss, [w, b])
            # The variables average the workers' updates.
            w.assign_sub(0.5 * gw)
            b.assign_sub(0.5 * gb)
        strategy.run(replica)

    for _ in range(args.steps * 10):
        step()
    predicted = tf.argmax(tf.matmul(tf.constant(txs, tf.float32), w) + b, axis=1)
    return (float(tf.reduce_mean(tf.cast(tf.equal(predicted, tf.constant(tys, tf.int64)),
                                         tf.float32))), strategy.num_replicas_in_sync)


def main():
    p = argparse.ArgumentParser(description="TonY's TensorFlow MNIST sample, for tony")
    p.add_argument("--data_dir", default="")
    p.add_argument("--working_dir", default="")
    p.add_argument("--steps", type=int, default=10)
    p.add_argument("--standin", action="store_true",
                   help="train a plain-Python model when TensorFlow is not installed")
    args, _ = p.parse_known_args()
    job, index = task()
    xs, ys = synthetic_mnist(500, seed=100 + index)
    txs, tys = synthetic_mnist(200, seed=7)
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    try:
        import tensorflow  # noqa: F401
    except ImportError as e:
        missing("tensorflow", e, args)
        if job == "ps":
            print("mnist_distributed: ps has nothing to serve for the stand-in", flush=True)
            return
        report("stand-in (no TensorFlow)", standin_train(xs, ys, txs, tys, args.steps),
               args.working_dir)
        return
    trained = train_tf(args, xs, ys, txs, tys)
    if trained is not None:
        report("tensorflow " + tensorflow.__version__, trained[0], args.working_dir, trained[1])


if __name__ == "__main__":
    main()
PY_END
}

pt_sample() {
  sample_common
  cat << 'PY_END'


def train_torch(args, xs, ys, txs, tys):
    import torch
    import torch.distributed as dist
    world = int(os.environ.get("WORLD_SIZE", "1"))
    if world > 1:
        dist.init_process_group("gloo")  # MASTER_ADDR, MASTER_PORT, RANK, WORLD_SIZE
        world = dist.get_world_size()
    model = torch.nn.Linear(64, 10)
    if world > 1:
        model = torch.nn.parallel.DistributedDataParallel(model)
    opt = torch.optim.SGD(model.parameters(), lr=0.5)
    x, y = torch.tensor(xs), torch.tensor(ys)
    for _ in range(args.epochs):
        for i in range(0, len(xs), 50):
            opt.zero_grad()
            torch.nn.functional.cross_entropy(model(x[i:i + 50]), y[i:i + 50]).backward()
            opt.step()
    with torch.no_grad():
        accuracy = (model(torch.tensor(txs)).argmax(1) == torch.tensor(tys)).float().mean().item()
    if world > 1:
        dist.destroy_process_group()
    return accuracy, world


def main():
    p = argparse.ArgumentParser(description="TonY's PyTorch MNIST sample, for tony")
    p.add_argument("--root", default="", help="where each task writes its result")
    p.add_argument("--epochs", type=int, default=10)
    p.add_argument("--standin", action="store_true",
                   help="train a plain-Python model when PyTorch is not installed")
    args, _ = p.parse_known_args()
    rank = int(os.environ.get("RANK", task()[1]))
    xs, ys = synthetic_mnist(500, seed=100 + rank)
    txs, tys = synthetic_mnist(200, seed=7)
    try:
        import torch
    except ImportError as e:
        missing("torch", e, args)
        report("stand-in (no PyTorch)", standin_train(xs, ys, txs, tys, args.epochs), args.root)
        return
    accuracy, world = train_torch(args, xs, ys, txs, tys)
    report("torch " + torch.__version__, accuracy, args.root, world)


if __name__ == "__main__":
    main()
PY_END
}

# tony.xml of a sample: name $1, framework $2.
tony_xml() {
  echo '<?xml version="1.0"?>'
  echo '<configuration>'
  prop tony.application.name "$1"
  prop tony.application.framework "$2"
  prop tony.worker.instances "$WORKER_INSTANCES"
  prop tony.worker.memory "$WORKER_MEMORY"
  if [[ "$2" == tensorflow && "$PS_INSTANCES" != 0 ]]; then
    prop tony.ps.instances "$PS_INSTANCES"
    prop tony.ps.memory "$PS_MEMORY"
  fi
  echo '</configuration>'
}
prop() { printf '  <property>\n    <name>%s</name>\n    <value>%s</value>\n  </property>\n' "$1" "$2"; }

# deps/$2: an environment directory $1 zipped, with pip packages $3... when
# given, else running the node's python3. Kept when its spec is unchanged.
python_env() {
  local name=$1 zip=$2 work spec
  shift 2
  spec="$name ${*:-node-python3}"
  if [[ -f "$SAMPLES/deps/$zip" && "$(cat "$SAMPLES/deps/.$zip.spec" 2> /dev/null)" == "$spec" ]]; then
    return 0
  fi
  local py
  py=$(command -v python3) || fail 4 "no python3 on this node for the samples' environments"
  work=$(mktemp -d "$PREFIX/.env.XXXXXX")
  if (($#)); then
    log "building deps/$zip with pip: $*"
    { "$py" -m venv --copies "$work/$name" &&
      "$work/$name/bin/pip" install -q "$@"; } > "$work/pip.log" 2>&1 || {
      tail -n 5 "$work/pip.log" >&2
      rm -rf "$work"
      fail 4 "cannot build deps/$zip with $* (python3 -m venv and pip; see above)"
    }
  else
    mkdir -p "$work/$name/bin"
    printf '#!/bin/sh\n# the node'"'"'s python3 (no tf_version/torch_version metadata given)\nexec %s "$@"\n' \
      "$py" > "$work/$name/bin/python3"
    chmod 755 "$work/$name/bin/python3"
  fi
  (cd "$work" && "$py" -m zipfile -c "$zip" "$name") || { rm -rf "$work"; fail 4 "cannot zip deps/$zip"; }
  mkdir -p "$SAMPLES/deps"
  mv "$work/$zip" "$SAMPLES/deps/$zip"
  echo "$spec" > "$SAMPLES/deps/.$zip.spec"
  rm -rf "$work"
}

write_samples() {
  local d
  for d in TFJob PTJob; do mkdir -p "$SAMPLES/jobs/$d/src"; done
  tf_sample > "$SAMPLES/jobs/TFJob/src/mnist_distributed.py"
  pt_sample > "$SAMPLES/jobs/PTJob/src/mnist_distributed.py"
  tony_xml TFJob tensorflow > "$SAMPLES/jobs/TFJob/tony.xml"
  tony_xml PTJob pytorch > "$SAMPLES/jobs/PTJob/tony.xml"
  local jar
  for jar in "$INSTALL"/lib/tony-cli-*-all.jar; do
    [[ -f "$jar" ]] || { log "warning: the bundle has no tony-cli-<version>-all.jar (built without TONY_BUILD_JAR): the samples have no jar"; break; }
    rm -f "$SAMPLES"/tony-cli-*-all.jar
    ln -sfn "$jar" "$SAMPLES/${jar##*/}"
  done
  local tf_pkgs=() pt_pkgs=()
  [[ -n "$TF_VERSION" ]] && tf_pkgs=("tensorflow==$TF_VERSION")
  [[ -n "$TORCH_VERSION" ]] && pt_pkgs=("torch==$TORCH_VERSION")
  [[ -n "$TORCHVISION_VERSION" ]] && pt_pkgs+=("torchvision==$TORCHVISION_VERSION")
  python_env tf tf.zip "${tf_pkgs[@]}"
  python_env pytorch pytorch.zip "${pt_pkgs[@]}"
  log "samples in $SAMPLES"
}

main() {
  (($# == 0)) || fail 2 "takes no arguments (it reads the instance metadata; see its header)"
  local role bundle version='^[0-9][0-9A-Za-z.+-]*$' memory='^[0-9]+[mMgG]?$' count='^[0-9]+$'
  role=$(node_role)
  bundle=$(metadata tony-bundle)
  bundle=${bundle:-${TONY_DATAPROC_BUNDLE:-}}
  [[ -n "$bundle" ]] ||
    fail 2 "no tony-bundle in the instance metadata: pass --metadata tony-bundle=gs://BUCKET/tony.tar.gz (doc/dataproc.md)"
  TF_VERSION=$(knob tf_version "" "$version")
  TORCH_VERSION=$(knob torch_version "" "$version")
  TORCHVISION_VERSION=$(knob torchvision_version "" "$version")
  WORKER_INSTANCES=$(knob worker_instances 2 "$count")
  WORKER_MEMORY=$(knob worker_memory 1g "$memory")
  PS_INSTANCES=$(knob ps_instances 0 "$count")
  PS_MEMORY=$(knob ps_memory 1g "$memory")
  log "node role $role"
  install_bundle "$bundle"
  write_profile
  if [[ "$role" == Master ]]; then
    link_commands
    write_samples
  fi
  log "done ($role)"
}

main "$@"
