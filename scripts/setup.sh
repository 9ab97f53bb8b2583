#!/usr/bin/env bash
# Installs what building and testing mpix-st needs on Debian 12 (as root or with sudo), only what is
# missing. The HIP compiler and runtime are installed so the HIP backend is compiled everywhere
# (AMD GPUs run it; here it only builds). CUDA is used where the toolkit is already installed.
#   scripts/setup.sh openmpi  also Open MPI (libopenmpi-dev, openmpi-bin), for builds with MPIX_ST_MPI=openmpi
#   MPIX_ST_SKIP_INSTALL=1  use the tools as they are (machines that are not Debian)
set -euo pipefail
[ "${MPIX_ST_SKIP_INSTALL:-0}" = 1 ] && exit 0
packages=(build-essential cmake ninja-build pkg-config mpich libmpich-dev doctest-dev
          libfabric-dev libhwloc-dev hipcc libamdhip64-dev python3)
for extra in "$@"; do
  case "$extra" in
    openmpi) packages+=(libopenmpi-dev openmpi-bin) ;;
    *) echo "setup.sh: unknown extra '$extra' (known: openmpi)" >&2; exit 2 ;;
  esac
done
missing=()
for pkg in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
done
[ ${#missing[@]} -eq 0 ] && exit 0
sudo=""
[ "$(id -u)" -eq 0 ] || sudo=sudo
echo "setup.sh: installing ${missing[*]}"
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
