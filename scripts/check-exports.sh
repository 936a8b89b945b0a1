#!/usr/bin/env bash
# check-exports.sh: export inlay's training plans (inlay train bench's
# scenarios with every planner, and hand-written plans with ZeRO 0-3, the
# interleaved schedule, recomputation, context parallelism, uneven first
# and last stages) and run each consumer's own parser on them: Megatron-LM's
# parse_args and validate_args, DeepSpeed's DeepSpeedConfig, torchtitan's
# ConfigManager and ParallelDims, Sailor's plan reader and simulator
# (scripts/check-exports/*.py say what each runs and what it stubs).
#
# The consumers' checkouts come from MEGATRON_DIR, DEEPSPEED_DIR,
# TORCHTITAN_DIR and SAILOR_DIR; one left unset is cloned at the pinned
# commit below where the network allows (CLONE=1), else skipped. Python:
# PYTHON (default python3) with torch (Debian's python3-torch) and, for
# DeepSpeed, pydantic 2; TORCH_SITE names a folder to find torch in when
# PYTHON's own packages lack it (the system Python's dist-packages, where
# Debian installs python3-torch, for another Python that has pydantic 2).
# Debian 12 packages the checkers import: python3-torch python3-packaging
# python3-yaml python3-cpuinfo python3-msgpack python3-tqdm python3-pandas.
# PLAN_BUDGET is the baseline planners' search budget (default 5s); ONLY
# runs the cases whose name contains it.
# Prints one line per plan and consumer (case, consumer, verdict, message)
# and exits non-zero when a consumer rejects an export.
set -euo pipefail
cd "$(dirname "$0")/.."

# the commits the results in docs/results/training-planner.md were taken at
MEGATRON_COMMIT=d98e8a64ddf34856e74b24714e3bedb2f5a39553   # NVIDIA/Megatron-LM
DEEPSPEED_COMMIT=38327e07f6cd39b63418f60cedd1651b0be3e7c3  # microsoft/DeepSpeed
TORCHTITAN_COMMIT=73a0e6979dd10b6b1904098eb3c8f62c18ab87ce # pytorch/torchtitan v0.2.2, the last to read TOML
SAILOR_COMMIT=cf2c8e3cc53ce178fe58a4003f46b4b6b848fc33     # eth-easl/sailor

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

clone() { # clone VAR REPO COMMIT
	local var=$1 repo=$2 commit=$3
	if [ -n "${!var:-}" ] || [ "${CLONE:-0}" != 1 ]; then
		return
	fi
	local d="$work/src/${repo#*/}"
	if git clone -q --filter=blob:none "https://github.com/$repo" "$d" 2>/dev/null &&
		git -C "$d" checkout -q "$commit" 2>/dev/null; then
		export "$var=$d"
	else
		echo "note: could not clone $repo; $var unset, skipped" >&2
	fi
}
clone MEGATRON_DIR NVIDIA/Megatron-LM "$MEGATRON_COMMIT"
clone DEEPSPEED_DIR microsoft/DeepSpeed "$DEEPSPEED_COMMIT"
clone TORCHTITAN_DIR pytorch/torchtitan "$TORCHTITAN_COMMIT"
clone SAILOR_DIR eth-easl/sailor "$SAILOR_COMMIT"
export MEGATRON_DIR="${MEGATRON_DIR:-}" DEEPSPEED_DIR="${DEEPSPEED_DIR:-}" TORCHTITAN_DIR="${TORCHTITAN_DIR:-}" SAILOR_DIR="${SAILOR_DIR:-}"

for v in MEGATRON_DIR DEEPSPEED_DIR TORCHTITAN_DIR SAILOR_DIR; do
	if [ -n "${!v}" ]; then
		export "$v=$(cd "${!v}" && pwd)"
		echo "consumer	$v	$(git -C "${!v}" rev-parse HEAD 2>/dev/null || echo 'not a git checkout')"
	fi
done
echo "torch	$(${PYTHON:-python3} -c 'import sys, os; sys.path.append(os.environ.get("TORCH_SITE", "")); import torch; print(torch.__version__)' 2>&1 | tail -1)"

${GO:-go} build -o "$work/inlay" ./cmd/inlay
mkdir -p "$work/plans"
${PYTHON:-python3} scripts/check-exports/run.py "$work/inlay" "$work/plans"
