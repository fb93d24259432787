#!/usr/bin/env bash
# Runs every benchmark; each prints a ratio against a baseline measured in
# the same invocation.
set -euo pipefail
cd "$(dirname "$0")"
python3 forwarding.py "$@"
