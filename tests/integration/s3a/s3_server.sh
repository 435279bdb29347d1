#!/usr/bin/env bash
# The S3-compatible server of the s3a tier: moto's server (moto[server] in
# scripts/requirements.txt) on a loopback address of its own.
#
#   s3_server.sh start DIR   starts it on $TONY_S3_ENDPOINT (host:port), its
#                            pid and log in DIR; waits until it answers
#   s3_server.sh stop DIR    stops the one started with DIR
#
# PYTHON (default python3) is the interpreter with moto installed. Exit 77
# (ctest's skip) when moto is not installed.
set -euo pipefail
cmd=${1:?start or stop}
dir=${2:?state directory}
endpoint=${TONY_S3_ENDPOINT:-127.0.24.1:5000}
python=${PYTHON:-python3}
case "$cmd" in
  start)
    if ! "$python" -c 'import moto.server' 2>/dev/null; then
      echo "s3_server.sh: $python has no moto server (pip install -r scripts/requirements.txt)" >&2
      exit 77
    fi
    mkdir -p "$dir"
    if [[ -s "$dir/pid" ]] && kill -0 "$(<"$dir/pid")" 2>/dev/null; then
      echo "s3_server.sh: already running (pid $(<"$dir/pid"))" >&2
      exit 0
    fi
    setsid "$python" -m moto.server -H "${endpoint%:*}" -p "${endpoint##*:}" \
      </dev/null >"$dir/moto.log" 2>&1 &
    echo $! >"$dir/pid"
    for _ in $(seq 1 100); do
      if curl -sf -o /dev/null "http://$endpoint/"; then
        echo "s3_server.sh: moto serves S3 at http://$endpoint (pid $(<"$dir/pid"))" >&2
        exit 0
      fi
      kill -0 "$(<"$dir/pid")" 2>/dev/null || break
      sleep 0.2
    done
    echo "s3_server.sh: moto did not answer at http://$endpoint; its log:" >&2
    tail -20 "$dir/moto.log" >&2 || true
    exit 1
    ;;
  stop)
    if [[ -s "$dir/pid" ]]; then
      pid=$(<"$dir/pid")
      kill "$pid" 2>/dev/null || true
      for _ in $(seq 1 50); do
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.1
      done
      kill -9 "$pid" 2>/dev/null || true
      rm -f "$dir/pid"
    fi
    ;;
  *)
    echo "s3_server.sh: start or stop, not '$cmd'" >&2
    exit 2
    ;;
esac
