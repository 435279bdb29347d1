#!/usr/bin/env bash
# Installs everything tony needs to build, test and run its examples, and
# does nothing for what is already there. Safe to run again.
#
#   scripts/setup.sh            system packages + the Python environment
#   scripts/setup.sh --no-python  system packages only
#
# The Python environment is a virtualenv in $TONY_VENV (default: .venv in the
# checkout) made from Debian's /usr/bin/python3 with its system packages
# visible, so Debian's python3-torch is used, plus tensorflow-cpu from PyPI.
set -euo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
with_python=1
[[ "${1:-}" == "--no-python" ]] && with_python=0

apt_packages=(
  build-essential cmake ninja-build pkg-config git clang clang-format ccache
  libclang-rt-14-dev
  libcaf-dev libprotobuf-dev protobuf-compiler libcurl4-openssl-dev
  libtomlplusplus-dev libspdlog-dev libcli11-dev nlohmann-json3-dev libssl-dev
  libgtest-dev libgmock-dev libbenchmark-dev libcpp-httplib-dev libpugixml-dev
  libisal-dev libsasl2-dev libsasl2-modules libkrb5-dev krb5-kdc krb5-admin-server krb5-user
  openjdk-17-jdk-headless maven procps psmisc curl unzip zip tar
  openssl faketime
  docker.io
  python3 python3-venv python3-pip python3-torch
  chromium
)

missing=()
for p in "${apt_packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" \
    || missing+=("$p")
done
# A JDK installed outside Debian's packages is fine for Maven.
if ((${#missing[@]})) && command -v java >/dev/null && command -v mvn >/dev/null; then
  filtered=()
  for p in "${missing[@]}"; do
    [[ "$p" == openjdk-17-jdk-headless || "$p" == maven ]] || filtered+=("$p")
  done
  missing=("${filtered[@]}")
fi
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  sudo=""
  [[ $(id -u) -ne 0 ]] && sudo=sudo
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -qq || true
  $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

if ((with_python)); then
  "$here/scripts/setup-python.sh"
  # From a cached wheel only: building Horovod takes most of an hour.
  "$here/scripts/setup-horovod.sh"
fi
echo "setup: system ready"
