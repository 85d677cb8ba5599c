#!/usr/bin/env bash
# results/controls-offline: SPARK, OpenEvolve and the sampling controls, offline, 3 seeds.
NAME=controls-offline ARG=${1:-}; source "$(dirname "$0")/_lib.sh"
done_if results/controls-offline/data/run.json
scripts/controls_offline.sh results/controls-offline
