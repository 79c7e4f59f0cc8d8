#!/usr/bin/env bash
# Runs the whole test suite on a fresh machine: installs the package and everything the tests need,
# then runs pytest. CI (.ci/run) calls exactly this script; nothing may be skipped there.
set -euo pipefail
cd "$(dirname "$0")/.."

export MLE_ENV_REQUIRE_SHARED=${MLE_ENV_REQUIRE_SHARED:-1}   # ../shared must be beside the repo
python -m pip install --quiet --disable-pip-version-check -e ".[dev,kaggle]"

python -m pytest -q "$@"
