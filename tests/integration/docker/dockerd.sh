#!/usr/bin/env bash
# A Docker daemon of the docker tier's own (doc/docker.md, "With a local
# daemon"), beside anything else on the machine:
#
#   dockerd.sh start --dir DIR   install docker.io if missing, start dockerd
#                                with its state under DIR, import the test
#                                image (built from Debian packages, no
#                                registry), and run one container to be sure
#   dockerd.sh stop --dir DIR    remove every container, stop the daemon,
#                                leave no process and no mount of it
#   dockerd.sh env --dir DIR     the variables the tests need, one NAME=value
#                                a line (what start wrote to DIR/env)
#
# The daemon: dockerd --storage-driver=vfs --iptables=false --ip-masq=false
# --bridge=none (no network of its own: tasks use the host's), with its
# --data-root, --exec-root, --pidfile and unix socket under DIR (the exec
# root and socket under a short directory in $TMPDIR when DIR's path is too
# long for a unix socket), and an empty daemon.json, so a machine's own
# /etc/docker/daemon.json is not read.
#
# The image, tony-test:<Debian codename>: the host's Debian release, from
# the mirror its apt sources name: python3, dash and coreutils (apt-get
# resolves the packages against an empty dpkg status, dpkg-deb unpacks
# them), ~60 MB unpacked, plus /etc/tony-test-image, a marker the tests look
# for. The tarball is kept in ${XDG_CACHE_HOME:-~/.cache}/tony/docker/ and
# made again when missing.
#
# Where no daemon can run (no root, docker.io cannot be installed, dockerd
# does not answer, a container cannot start), `start` says why, writes the
# reason to DIR/unavailable for the tests (which then skip saying it) and
# exits 77. Other errors: exit 1. Bad usage: exit 2.
set -euo pipefail

usage() {
  echo "usage: dockerd.sh start|stop|env --dir DIR" >&2
  exit 2
}

cmd=${1:-}
shift || true
dir=${TONY_DOCKERD_DIR:-}
while (($#)); do
  case "$1" in
    --dir) dir=${2:-}; shift 2 ;;
    *) echo "dockerd.sh: unknown argument '$1'" >&2; usage ;;
  esac
done
[[ -n "$cmd" && -n "$dir" ]] || usage
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)

# How long dockerd may take to answer, and each docker command.
START_WAIT=${TONY_DOCKERD_START_WAIT:-60}

# The exec root and the socket: under DIR when the longest socket path
# there (containerd's, under the exec root) fits in a unix socket's 108
# bytes, else in a directory named after DIR in $TMPDIR.
run_dir_of() {
  local candidate="$dir/run" longest="/exec/containerd/containerd.sock.ttrpc"
  if ((${#candidate} + ${#longest} > 100)); then
    candidate="${TMPDIR:-/tmp}/tony-dockerd-$(printf %s "$dir" | cksum | cut -d' ' -f1)"
  fi
  echo "$candidate"
}
run=$(run_dir_of)
sock="$run/docker.sock"
pidfile="$run/dockerd.pid"
export DOCKER_HOST="unix://$sock"

log() { echo "dockerd.sh: $*"; }

unavailable() {
  log "no Docker daemon for the docker tier: $*"
  printf '%s\n' "$*" > "$dir/unavailable"
  rm -f "$dir/env"
  exit 77
}

dockerd_pid() {
  local pid
  pid=$(cat "$pidfile" 2>/dev/null) || return 1
  [[ -n "$pid" ]] && kill -0 "$pid" 2>/dev/null && echo "$pid"
}

# Processes whose command line names the run or data directory: the
# daemon's containerd and the containers' shims.
leftovers() {
  local rx
  rx="$(regex_of "$run/")|$(regex_of "$dir/data")"
  pgrep -f -- "$rx" || true
}

regex_of() {
  printf '%s' "$1" | sed 's/[][\\.*^$+?(){}|]/\\&/g'
}

unmount_below() {
  local m
  # Deepest first.
  for m in $(awk '{print $5}' /proc/self/mountinfo | grep -E "^($(regex_of "$run")|$(regex_of "$dir/data"))(/|$)" | sort -r); do
    umount -l "$m" 2>/dev/null || true
  done
}

stop_daemon() {
  local pid i
  if pid=$(dockerd_pid); then
    local ids
    ids=$(timeout 20 docker ps -aq 2>/dev/null || true)
    if [[ -n "$ids" ]]; then
      log "removing containers: $(echo $ids)"
      # shellcheck disable=SC2086
      timeout 60 docker rm -f $ids >/dev/null 2>&1 || true
    fi
    kill -TERM "$pid" 2>/dev/null || true
    for ((i = 0; i < 200; ++i)); do
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.1
    done
    if kill -0 "$pid" 2>/dev/null; then
      log "dockerd (pid $pid) still runs 20 s after SIGTERM: SIGKILL"
      kill -KILL "$pid" 2>/dev/null || true
    fi
  fi
  # containerd ends with dockerd; a container that outlived it (a killed
  # daemon) goes through runc's own state, then its shim.
  local runc_root="$run/exec/runtime-runc/moby" c
  if [[ -d "$runc_root" ]] && command -v runc > /dev/null; then
    for c in "$runc_root"/*; do
      [[ -e "$c" ]] || continue
      log "removing the container ${c##*/} that outlived dockerd"
      timeout 20 runc --root "$runc_root" delete --force "${c##*/}" || true
    done
  fi
  local left
  for ((i = 0; i < 50; ++i)); do
    left=$(leftovers)
    [[ -z "$left" ]] && break
    # shellcheck disable=SC2086
    ((i == 20)) && kill -KILL $left 2>/dev/null
    sleep 0.1
  done
  unmount_below
  left=$(leftovers)
  if [[ -n "$left" ]]; then
    log "processes of the daemon are still running:"
    # shellcheck disable=SC2086
    ps -o pid,args -p "$(echo $left | tr ' ' ,)" || true
    return 1
  fi
  rm -rf "$run" "$dir/data"
  rm -f "$dir/env"
}

# -- the image ---------------------------------------------------------------------

codename() {
  (. /etc/os-release && echo "${VERSION_CODENAME:-}")
}

build_rootfs_tarball() {
  local out=$1 work
  work=$(mktemp -d "$dir/image.XXXXXX")
  # shellcheck disable=SC2064
  trap "rm -rf '$work'" RETURN
  mkdir -p "$work/debs/partial" "$work/rootfs"
  : > "$work/status"
  local apt=(apt-get -qq -y -o "Dir::State::status=$work/status"
             -o "Dir::Cache::archives=$work/debs" -o APT::Install-Recommends=false
             -o Debug::NoLocking=1 --download-only install
             base-files dash coreutils python3)
  log "downloading the image's Debian packages"
  if ! "${apt[@]}" > "$work/apt.log" 2>&1; then
    # No package lists yet (a fresh machine): fetch them once.
    apt-get update -qq > "$work/apt.log" 2>&1 || true
    "${apt[@]}" > "$work/apt.log" 2>&1 || {
      cat "$work/apt.log"
      return 1
    }
  fi
  local root="$work/rootfs" deb
  # Debian 12's merged /usr: the packages ship /bin, /lib, ... paths.
  mkdir -p "$root/usr/bin" "$root/usr/sbin" "$root/usr/lib" "$root/usr/lib64"
  for d in bin sbin lib lib64; do ln -s "usr/$d" "$root/$d"; done
  for deb in "$work"/debs/*.deb; do
    dpkg-deb --fsys-tarfile "$deb" | tar -x --keep-directory-symlink -C "$root"
  done
  rm -rf "$root"/usr/share/{doc,man,info,locale,lintian} "$root"/var/cache/* "$root"/var/lib/dpkg
  echo "root:x:0:0:root:/root:/bin/sh" > "$root/etc/passwd"
  echo "root:x:0:" > "$root/etc/group"
  echo "tony-test $(codename)" > "$root/etc/tony-test-image"
  [[ -x "$root/usr/bin/python3" && -e "$root/bin/sh" ]] || {
    log "the image's root file system has no python3 or /bin/sh"
    return 1
  }
  mkdir -p "$(dirname "$out")"
  tar -C "$root" -c . | gzip -1 > "$out.tmp"
  mv "$out.tmp" "$out"
}

ensure_image() {
  local image=$1 code=$2 cache
  if timeout 30 docker image inspect "$image" > /dev/null 2>&1; then
    return 0
  fi
  cache="${XDG_CACHE_HOME:-$HOME/.cache}/tony/docker/tony-test-$code-$(dpkg --print-architecture).tar.gz"
  if [[ ! -s "$cache" ]]; then
    local t=$SECONDS
    build_rootfs_tarball "$cache" || return 1
    log "built $cache in $((SECONDS - t)) s ($(du -h "$cache" | cut -f1))"
  fi
  timeout 120 docker import "$cache" "$image" > /dev/null || {
    # A damaged cache is made again next time.
    rm -f "$cache"
    return 1
  }
}

# -- start -------------------------------------------------------------------------

start_daemon() {
  rm -f "$dir/unavailable" "$dir/env"
  [[ $(id -u) -eq 0 ]] ||
    unavailable "dockerd needs root here (uid $(id -u)); run the docker tier as root"
  if ! command -v dockerd > /dev/null; then
    if command -v apt-get > /dev/null; then
      log "installing docker.io"
      (export DEBIAN_FRONTEND=noninteractive
       apt-get install -y -qq --no-install-recommends docker.io > "$dir/apt.log" 2>&1 ||
         { apt-get update -qq > /dev/null 2>&1 || true
           apt-get install -y -qq --no-install-recommends docker.io >> "$dir/apt.log" 2>&1; }) ||
        unavailable "cannot install docker.io: $(tail -n 3 "$dir/apt.log" | tr '\n' ' ')"
    fi
    command -v dockerd > /dev/null || unavailable "no dockerd, and no apt-get to install docker.io"
  fi
  command -v docker > /dev/null || unavailable "no docker client on PATH"
  # One daemon per directory: a leftover of an earlier run goes first.
  stop_daemon || exit 1
  mkdir -p "$run/exec" "$dir/data"
  echo '{}' > "$dir/daemon.json"
  log "starting dockerd (state in $dir, socket $sock)"
  setsid dockerd --storage-driver=vfs --iptables=false --ip-masq=false --bridge=none \
    --config-file "$dir/daemon.json" --data-root "$dir/data" --exec-root "$run/exec" \
    --pidfile "$pidfile" -H "unix://$sock" < /dev/null > "$dir/dockerd.log" 2>&1 &
  local launched=$! i answer=""
  for ((i = 0; i < START_WAIT * 2; ++i)); do
    if ! kill -0 "$launched" 2>/dev/null; then
      stop_daemon || true
      unavailable "dockerd exited at start: $(tail -n 3 "$dir/dockerd.log" | tr '\n' ' ')"
    fi
    answer=$(timeout 10 docker info --format '{{.ServerVersion}}' 2>&1) && break
    answer=""
    sleep 0.5
  done
  if [[ -z "$answer" ]]; then
    stop_daemon || true
    unavailable "dockerd did not answer within $START_WAIT s: $(tail -n 3 "$dir/dockerd.log" | tr '\n' ' ')"
  fi
  log "dockerd $answer answers (pid $(dockerd_pid || echo ?))"

  local code image
  code=$(codename)
  [[ -n "$code" ]] || { stop_daemon || true; unavailable "no VERSION_CODENAME in /etc/os-release: not Debian?"; }
  image="tony-test:$code"
  if ! ensure_image "$image" "$code"; then
    stop_daemon || true
    unavailable "cannot make the image $image from Debian packages (see above)"
  fi
  local probe
  if ! probe=$(timeout 120 docker run --rm --init --network=host "$image" \
                 /bin/sh -c 'cat /etc/tony-test-image && python3 -c "print(42)"' 2>&1); then
    stop_daemon || true
    unavailable "a container of $image cannot run here: $probe"
  fi
  log "a container of $image runs: $(echo $probe)"
  printf 'DOCKER_HOST=%s\nTONY_DOCKER_TEST_IMAGE=%s\n' "$DOCKER_HOST" "$image" > "$dir/env"
}

case "$cmd" in
  start) start_daemon ;;
  stop)
    stop_daemon
    log "stopped"
    ;;
  env)
    if [[ -f "$dir/env" ]]; then
      cat "$dir/env"
    elif [[ -f "$dir/unavailable" ]]; then
      echo "dockerd.sh: no daemon: $(cat "$dir/unavailable")" >&2
      exit 77
    else
      echo "dockerd.sh: no daemon in $dir: run dockerd.sh start --dir $dir" >&2
      exit 1
    fi
    ;;
  *) usage ;;
esac
