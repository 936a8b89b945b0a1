#!/usr/bin/env bash
# doc-commands.sh: runs the inlay commands shown in README.md and docs/ as
# written, in a scratch folder, and fails when one exits non-zero.
#
# `go test -run TestDocCommands ./cmd/inlay` (part of make test) checks that
# every command line of the docs parses: the subcommand exists, every flag
# exists and takes its value. This script goes further and runs the ones
# that need nothing heavy: the commands of RUNNABLE below, without
# placeholders (WORKLOAD, FILE, URL, ...). Profiling, running, benches, the
# web UI, the agent and the Kubernetes commands are left to their own tests.
# The models and ONNX Runtime must be fetched (make fetch; make
# doc-commands does it first). Each command gets DOC_TIMEOUT seconds
# (default 300); running past it is a failure.
#
# Usage: scripts/doc-commands.sh [-v]    (-v: print each command's output)
set -euo pipefail

GO=${GO:-go}
DOC_TIMEOUT=${DOC_TIMEOUT:-300}
verbose=0
[ "${1:-}" = "-v" ] && verbose=1

root=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

cd "$root"
echo "doc-commands: building inlay"
"$GO" build -o "$tmp/bin/inlay" ./cmd/inlay
INLAY_DOC_COMMANDS="$tmp/list" "$GO" test -count=1 -run '^TestDocCommands$' ./cmd/inlay >/dev/null

# The commands run in a scratch folder that holds what they name by a
# relative path: the examples, a docs/ folder for the charts, and the
# shared data beside the repository.
work="$tmp/work"
mkdir -p "$work/docs"
cp -r examples "$work/examples"
[ -d "$root/../shared" ] && ln -s "$root/../shared" "$tmp/shared"
export PATH="$tmp/bin:$PATH"

# Subcommands that run in seconds to a few minutes on two cores.
RUNNABLE='^(demo|inspect|zoo list|zoo export|platforms|platforms show|plan|simulate|quantize|calibrate --published|cluster platforms|cluster policies|cluster generate|cluster simulate)( |$)'

# An upper-case word of three letters or more (WORKLOAD, FILE, FRESH.db).
PLACEHOLDER='[ /=][A-Z][A-Z0-9_]{2,}[. ]'

# inputs_exist says whether every positional argument that names a file
# (.yaml, .yml, .json, .jsonl, .onnx, .csv) exists in the scratch folder;
# a flag's value (-o plan.yaml) is an output, not checked.
inputs_exist() {
	local prev="" w
	for w in $1; do
		case $w in
		*.yaml | *.yml | *.json | *.jsonl | *.onnx | *.csv)
			if [[ $prev != -* || $prev == --dag || $prev == --plan || $prev == --published ]]; then
				[ -e "$work/${w/#\~/$HOME}" ] || [ -e "${w/#\~/$HOME}" ] || return 1
			fi
			;;
		esac
		prev=$w
	done
}

pass=0 fail=0 skip=0
declare -A seen
while IFS=$'\t' read -r where kind args; do
	# A mention (`inlay plan` in running text) and a command already run
	# are not run; neither are the generated reference pages' links.
	if [ "$kind" != command ] || [ -n "${seen[$args]:-}" ] || [[ $where == docs/reference/* ]]; then
		skip=$((skip + 1))
		continue
	fi
	seen[$args]=1
	if ! [[ $args =~ $RUNNABLE ]]; then
		skip=$((skip + 1))
		continue
	fi
	# A placeholder such as WORKLOAD, FILE or FRESH.db is no file to run on.
	if [[ " $args " =~ $PLACEHOLDER ]]; then
		skip=$((skip + 1))
		continue
	fi
	# A cluster simulation under an LP policy (gavel*, ftf; the default is
	# gavel) takes minutes to hours of CBC: the cluster bench's job.
	if [[ $args == "cluster simulate"* && ! $args =~ --policy\ (inlay|inlay-noss|inlay-srpt|las|fifo|srtf|gandiva|tiresias|tetris|dag|elastic)( |$) ]]; then
		skip=$((skip + 1))
		continue
	fi
	# A store to measure into needs a device run first (inlay profile).
	if [[ " $args " == *" --profiles "* ]]; then
		skip=$((skip + 1))
		continue
	fi
	# An input file the docs ask the reader to write (my.yaml) is not here.
	if ! inputs_exist "$args"; then
		skip=$((skip + 1))
		continue
	fi
	log="$tmp/out"
	if (cd "$work" && timeout "$DOC_TIMEOUT" bash -c "inlay $args" >"$log" 2>&1); then
		pass=$((pass + 1))
		echo "ok    $where: inlay $args"
		[ $verbose = 1 ] && sed 's/^/      /' "$log"
	else
		rc=$?
		fail=$((fail + 1))
		echo "FAIL  $where: inlay $args (exit $rc)"
		tail -n 5 "$log" | sed 's/^/      /'
	fi
done <"$tmp/list"

echo "doc-commands: $pass ran, $fail failed, $skip left to their own tests"
[ "$fail" = 0 ]
