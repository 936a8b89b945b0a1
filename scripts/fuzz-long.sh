#!/usr/bin/env bash
# make fuzz-long: fuzz every parser of user files (internal/fuzzlist) until
# it has seen FUZZ_EXECS inputs (default 1,000,000) without a failure, and
# report the executions per parser. Not part of make test: it takes long.
#
# Go 1.26's fuzz coordinator stalls on small loaded machines when it runs
# several workers (a -fuzztime run then ends after a few hundred
# executions). So each target runs with -parallel 1 (one worker), in runs
# of FUZZ_CHUNK executions (-fuzztime Nx) that continue the same corpus;
# a run whose log shows no progress for FUZZ_STALL seconds is stopped, its
# executions counted, and restarted. A failing input fails the target at
# once (the fuzzer writes it to testdata/fuzz).
#
#   FUZZ_EXECS=1000000 FUZZ_CHUNK=250000 FUZZ_STALL=120 make fuzz-long
#   FUZZ_TARGETS="./hw:FuzzParse" make fuzz-long    # one target
set -uo pipefail
GO=${GO:-go}
FUZZ_EXECS=${FUZZ_EXECS:-1000000}
FUZZ_CHUNK=${FUZZ_CHUNK:-250000}
FUZZ_STALL=${FUZZ_STALL:-120}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
targets=${FUZZ_TARGETS:-$("$GO" run ./internal/fuzzlist)}
root=$(pwd)
summary=()
status=0

# execs prints the last execution count a fuzz log reports (0: none).
execs() {
	grep -o 'execs: [0-9]*' "$1" | tail -1 | grep -o '[0-9]*$' || echo 0
}

for t in $targets; do
	pkg=${t%%:*} fn=${t##*:}
	bin="$work/$(echo "$pkg" | tr '/.' '__').test"
	# -fuzz at build time instruments the binary for coverage guidance
	# (without it the fuzzer only mutates blindly, and says so).
	if ! "$GO" test -c -fuzz "^$fn\$" -o "$bin" "$pkg"; then
		summary+=("$pkg $fn: does not build")
		status=1
		continue
	fi
	total=0 runs=0 stalls=0 failed=""
	start=$(date +%s)
	while [ "$total" -lt "$FUZZ_EXECS" ]; do
		n=$((FUZZ_EXECS - total))
		[ "$n" -gt "$FUZZ_CHUNK" ] && n=$FUZZ_CHUNK
		log="$work/log"
		: >"$log"
		(cd "$root/$pkg" && exec "$bin" -test.run '^$' -test.fuzz "^$fn\$" -test.fuzztime "${n}x" \
			-test.parallel 1 -test.fuzzcachedir "$work/cache") >"$log" 2>&1 &
		pid=$!
		last=0 quiet=0
		while kill -0 "$pid" 2>/dev/null; do
			sleep 5
			size=$(stat -c %s "$log")
			if [ "$size" = "$last" ]; then
				quiet=$((quiet + 5))
			else
				last=$size quiet=0
			fi
			if [ "$quiet" -ge "$FUZZ_STALL" ]; then
				kill "$pid" 2>/dev/null
				stalls=$((stalls + 1))
				break
			fi
		done
		wait "$pid"
		rc=$?
		runs=$((runs + 1))
		got=$(execs "$log")
		if grep -q 'without coverage guidance' "$log"; then
			failed="the binary was built without coverage instrumentation"
			break
		fi
		if [ "$rc" != 0 ] && [ "$quiet" -lt "$FUZZ_STALL" ]; then
			if grep -qE 'Failing input written|panic:|--- FAIL' "$log"; then
				cat "$log"
				failed="FAILED (input in $pkg/testdata/fuzz/$fn)"
				break
			fi
			# The coordinator's own deadline race (golang/go#75804): count
			# what ran and go on.
			stalls=$((stalls + 1))
		fi
		total=$((total + got))
		echo "fuzz-long $pkg $fn: $total of $FUZZ_EXECS executions (run $runs, $stalls stalled)"
		if [ "$got" = 0 ] && [ "$runs" -ge 3 ] && [ "$stalls" -ge 3 ]; then
			failed="no progress after $runs runs"
			break
		fi
	done
	secs=$(($(date +%s) - start))
	line="$pkg $fn: $total executions in ${secs}s ($runs runs, $stalls stalled)"
	if [ -n "$failed" ]; then
		line="$line: $failed"
		status=1
	else
		line="$line, no failure"
	fi
	echo "fuzz-long $line"
	summary+=("$line")
done
echo
echo "fuzz-long summary (FUZZ_EXECS=$FUZZ_EXECS per parser):"
for s in "${summary[@]}"; do
	echo "  $s"
done
exit $status
