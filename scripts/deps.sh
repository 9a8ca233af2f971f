#!/usr/bin/env bash
# Installs every Debian 12 package ibfabric needs to build, test and run its demo.
# Idempotent: when everything is installed already it returns in well under a second.
set -euo pipefail

PACKAGES=(
  # build
  build-essential cmake ninja-build pkg-config clang-format
  # InfiniBand userspace + simulator + subnet manager
  libibumad-dev libibmad-dev libibnetdisc-dev libopensm-dev infiniband-diags ibsim-utils opensm
  # service libraries
  prometheus-cpp-dev libcpp-httplib-dev nlohmann-json3-dev libcli11-dev libspdlog-dev
  libyaml-cpp-dev libsqlite3-dev sqlite3
  # tests
  googletest libgtest-dev libgmock-dev prometheus curl procps psmisc bc jq
  # tests: the web view in a headless browser (tests/e2e/ui_e2e_test.cpp)
  chromium chromium-driver
  # tests: the scheduler exports against their consumers' CRD schemas (tests/schemas/)
  python3 python3-jsonschema python3-yaml
  # tests: a private slurmctld reads the exported topology.conf (tests/integration/)
  slurmctld slurm-client munge
  # tests: Prometheus remote-writes to VictoriaMetrics, vmalert runs the rules (tests/e2e/)
  victoria-metrics
  # tests: the fuzz tree (scripts/build.sh fuzz): clang and its libFuzzer/sanitizer runtimes
  clang libclang-rt-dev
)

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

if [ "$(id -u)" -ne 0 ]; then
  echo "deps.sh: missing packages: ${missing[*]}" >&2
  echo "deps.sh: run as root (or: sudo apt-get install ${missing[*]})" >&2
  exit 1
fi

echo "deps.sh: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
# The prometheus and victoria-metrics packages start system services; the tests run their own
# instances.
for service in prometheus victoria-metrics; do
  if command -v systemctl >/dev/null 2>&1 && systemctl is-active --quiet "$service" 2>/dev/null; then
    systemctl stop "$service" || true
  fi
done
