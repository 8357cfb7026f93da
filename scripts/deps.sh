#!/usr/bin/env bash
# Installs the Debian packages libhft builds and tests with, if missing.
set -euo pipefail
pkgs=(build-essential cmake ninja-build g++ clang libclang-rt-14-dev
      libgtest-dev libgmock-dev googletest libbenchmark-dev
      libexpat1-dev libcli11-dev nlohmann-json3-dev libquickfix-dev
      libssl-dev zlib1g-dev libcpp-httplib-dev prometheus
      libhdrhistogram-java  # HdrHistogram's own reader of the lab's .hlog files (a test)
      python3 procps iproute2)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "installing: ${missing[*]}"
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}"
fi
