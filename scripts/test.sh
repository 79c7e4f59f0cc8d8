#!/usr/bin/env bash
# Runs the whole test suite on a fresh machine (Debian, root): installs the package and everything the
# tests need (the locked Python packages, bubblewrap, Docker engine, sandbox image, local LLM server, Ray),
# starts the services they use, runs pytest, and stops what it started. The Ray tests start and stop their
# own two-node cluster.
# CI (.ci/run) calls exactly this script; there, no test may be skipped for a missing service.
#
#   bash scripts/test.sh [pytest arguments]
#
# What is slow is reused when already present: the Docker engine, the agent image.
set -euo pipefail
cd "$(dirname "$0")/.."
LOGS=${MLE_ENV_TEST_LOGS:-/tmp/mle-env-test-logs}
mkdir -p "$LOGS"
STARTED=()

cleanup() {
  for pid in "${STARTED[@]:-}"; do
    [ -n "$pid" ] && kill "$pid" 2>/dev/null || true
  done
}
trap cleanup EXIT

apt_install() {
  if [ -z "${APT_UPDATED:-}" ]; then apt-get update -qq >"$LOGS/apt.log" 2>&1; APT_UPDATED=1; fi
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >>"$LOGS/apt.log" 2>&1
}

echo "== python packages (requirements.lock: the pinned versions of every extra; see README)"
python -m pip install --quiet --disable-pip-version-check -r requirements.lock
python -m pip install --quiet --disable-pip-version-check --no-deps -e .
python -m pip check   # a dependency of pyproject.toml that the lock lacks: regenerate it

echo "== bubblewrap (the isolated local sandbox)"
command -v bwrap >/dev/null || apt_install bubblewrap

echo "== docker engine"
if ! docker info >/dev/null 2>&1; then
  command -v dockerd >/dev/null || apt_install docker.io
  nohup dockerd >"$LOGS/dockerd.log" 2>&1 &
  STARTED+=($!)
  for _ in $(seq 60); do docker info >/dev/null 2>&1 && break; sleep 1; done
  docker info >/dev/null 2>&1 || { echo "dockerd did not start; see $LOGS/dockerd.log"; exit 1; }
fi

echo "== agent image"
command -v debootstrap >/dev/null || apt_install debootstrap
mle-env image build --offline --if-needed

echo "== chromium (the viewer's browser tests drive Debian's build through playwright)"
command -v chromium >/dev/null || apt_install chromium

echo "== local LLM server"
if [ -z "${MLE_ENV_LLM_BASE_URL:-}" ]; then
  rm -f "$LOGS/llm-url"
  python scripts/llm_server.py --port 8765 --threads 2 --ready-file "$LOGS/llm-url" >"$LOGS/llm-server.log" 2>&1 &
  server=$!
  STARTED+=($server)
  for _ in $(seq 300); do [ -s "$LOGS/llm-url" ] && break; kill -0 "$server" 2>/dev/null || break; sleep 1; done
  [ -s "$LOGS/llm-url" ] || { echo "the LLM server did not start; see $LOGS/llm-server.log"; exit 1; }
  export MLE_ENV_LLM_BASE_URL=$(cat "$LOGS/llm-url")
fi

export MLE_ENV_REQUIRE_SHARED=${MLE_ENV_REQUIRE_SHARED:-1}   # ../shared must be beside the repo
export MLE_ENV_REQUIRE_LLM=${MLE_ENV_REQUIRE_LLM:-1}         # no LLM test may be skipped
export MLE_ENV_REQUIRE_RAY=${MLE_ENV_REQUIRE_RAY:-1}         # the tests start and stop their own Ray cluster
export MLE_ENV_REQUIRE_DOCKER=${MLE_ENV_REQUIRE_DOCKER:-1}   # no docker test may be skipped
export MLE_ENV_REQUIRE_KAGGLE=${MLE_ENV_REQUIRE_KAGGLE:-1}   # the kaggle extra must import
export MLE_ENV_REQUIRE_BWRAP=${MLE_ENV_REQUIRE_BWRAP:-1}     # bwrap must run the isolated local sandbox
export MLE_ENV_REQUIRE_RL=${MLE_ENV_REQUIRE_RL:-1}         # the RL adapters (openenv-core, verifiers, trl) must import
export MLE_ENV_REQUIRE_BROWSER=${MLE_ENV_REQUIRE_BROWSER:-1} # chromium and playwright must drive the viewer's tests

echo "== tests"
# two worker processes (MLE_ENV_TEST_WORKERS; 0 runs in this one), each taking whole modules, so that a module's
# fixtures are built once; the 40 slowest are listed, to keep the suite's time in view
python -m pytest -q -n "${MLE_ENV_TEST_WORKERS:-2}" --dist loadscope --durations=40 "$@"
