#!/usr/bin/env bash
# Fuzz every parser of user files (internal/fuzzlist) for FUZZTIME each,
# with one fuzz worker (-parallel 1) and no minimisation of new inputs
# (-fuzzminimizetime 0): by default the fuzzer spends up to 60 s
# minimising each input that finds new coverage and counts nothing
# meanwhile, so a short run looked stalled (the ONNX loader got 142
# executions in 10 s); without it a parser runs thousands a second. A
# failing input is then written as found, unminimised. make fuzz-long runs
# longer.
#
# Go 1.26's fuzz coordinator can end a -fuzztime run with a bare
# "context deadline exceeded" failure at the deadline, on a loaded machine,
# without any failing input (golang/go#75804, fixed in Go 1.27). Such a run
# is tried again, up to three times in all (CI once saw it twice in a row
# on one target); a failure that wrote a failing input, printed anything
# else, or comes three times fails the target.
set -euo pipefail
GO=${GO:-go}
FUZZTIME=${FUZZTIME:-6s}
log=$(mktemp)
trap 'rm -f "$log"' EXIT

# spurious reports whether the failed run in $log is the coordinator's
# deadline race: the deadline message and no failing input written.
spurious() {
	grep -q 'context deadline exceeded' "$log" &&
		! grep -qE 'Failing input written|panic:' "$log"
}

for t in $("$GO" run ./internal/fuzzlist); do
	pkg=${t%%:*} fn=${t##*:}
	for try in 1 2 3; do
		echo "fuzz $pkg $fn ($FUZZTIME)"
		if "$GO" test -run '^$' -fuzz "^$fn\$" -fuzztime "$FUZZTIME" -parallel 1 -fuzzminimizetime 0 "$pkg" >"$log" 2>&1; then
			cat "$log"
			break
		fi
		cat "$log"
		if [ "$try" -lt 3 ] && spurious; then
			echo "fuzz $pkg $fn: the fuzzer stopped on its own deadline with no failing input (golang/go#75804); again"
			continue
		fi
		exit 1
	done
done
