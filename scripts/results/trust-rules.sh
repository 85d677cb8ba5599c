#!/usr/bin/env bash
# results/trust-rules: each rule of issue 24, before and after, on the same small runs.
NAME=trust-rules ARG=${1:-}; source "$(dirname "$0")/_lib.sh"
done_if results/trust-rules/figures.csv
scripts/trust_rules.sh results/trust-rules
