#!/usr/bin/env bash
# make fuzz-long: fuzz every parser of user files (internal/fuzzlist) until
# it has seen FUZZ_EXECS coverage-guided inputs (default 1,000,000) without
# a failure, and report the executions per parser. Not part of make test.
#
# Why runs used to stall: by default the fuzzer minimises every input that
# finds new coverage, for up to 60 s each (-fuzzminimizetime), and counts
# no executions meanwhile; early in a run nearly every input is new, so the
# execution count froze for minutes (the ONNX loader got 142 executions in
# CI's 10 s). Here -fuzzminimizetime 0 keeps new inputs as found (crashers
# too: they are written unminimised), which runs thousands a second. Each
# target also runs with one worker (-parallel 1) on the 2-core machine.
#
# Resumable: the corpus lives in Go's fuzz cache ($GOCACHE/fuzz, shared
# with go test -fuzz), and the executions so far are kept in FUZZ_STATE
# after every run of FUZZ_CHUNK executions (and when the script is
# stopped), keyed by a hash of the source the target is built from; a
# target whose source changed starts again from 0. A run whose progress
# line does not change for FUZZ_STALL seconds is stopped, what it reported
# counted, and restarted. A failing input stops the target at once: the
# fuzzer writes it to the package's testdata/fuzz.
#
#   FUZZ_EXECS=1000000 FUZZ_CHUNK=250000 FUZZ_STALL=120 make fuzz-long
#   FUZZ_TARGETS="./hw:FuzzParse" make fuzz-long    # one target
#   FUZZ_RESET=1 make fuzz-long                     # forget the counts
#   FUZZ_REPORT=1 make fuzz-long                    # print the counts kept
#                                                   # for the source as it is
set -uo pipefail
GO=${GO:-go}
FUZZ_EXECS=${FUZZ_EXECS:-1000000}
FUZZ_CHUNK=${FUZZ_CHUNK:-250000}
FUZZ_STALL=${FUZZ_STALL:-120}
FUZZ_STATE=${FUZZ_STATE:-${XDG_CACHE_HOME:-$HOME/.cache}/inlay/fuzz-long.tsv}
mkdir -p "$(dirname "$FUZZ_STATE")"
touch "$FUZZ_STATE"
[ -n "${FUZZ_RESET:-}" ] && : >"$FUZZ_STATE"
work=$(mktemp -d)
pid=""
cleanup() { rm -rf "$work"; }
trap cleanup EXIT
targets=${FUZZ_TARGETS:-$("$GO" run ./internal/fuzzlist)}
root=$(pwd)
cache=$("$GO" env GOCACHE)/fuzz
summary=()
status=0

# progress prints the last progress line of a fuzz log without its elapsed
# time: it changes while baseline coverage is gathered or inputs run.
progress() {
	grep '^fuzz: elapsed' "$1" | tail -1 | sed 's/elapsed: [0-9hms]*, //'
}

# execs prints the last execution count a fuzz log reports (0: none).
execs() {
	grep -o 'execs: [0-9]*' "$1" | tail -1 | grep -o '[0-9]*$' || echo 0
}

# srchash hashes what a target's behaviour depends on: the Go, embedded and
# test files of the module's packages it imports, and the path and version
# of every other module it builds from (not all of go.sum: a module that
# the target does not link does not reset its count).
srchash() {
	{
		"$GO" list -deps -test -f '{{if .Module}}{{if .Module.Main}}{{$d := .Dir}}{{range .GoFiles}}{{$d}}	{{.}}
{{end}}{{range .EmbedFiles}}{{$d}}	{{.}}
{{end}}{{range .TestGoFiles}}{{$d}}	{{.}}
{{end}}{{end}}{{end}}' "$1" | awk -F'\t' '$2 !~ /^\// { print $1 "/" $2 }' | sort -u | xargs cat
		"$GO" list -deps -test -f '{{if .Module}}{{if not .Module.Main}}{{.Module.Path}}@{{.Module.Version}}{{end}}{{end}}' "$1" | sort -u
	} | sha256sum | cut -c1-16
}

# state NAME HASH prints "execs seconds" recorded for the target (0 0).
state() {
	awk -F'\t' -v t="$1" -v h="$2" '$1 == t && $2 == h { e = $3; s = $4 } END { print (e ? e : 0), (s ? s : 0) }' "$FUZZ_STATE"
}

# save NAME HASH EXECS SECONDS records the target's count.
# Runs with disjoint FUZZ_TARGETS may share the file (flock).
save() {
	(
		flock 9
		local tmp="$FUZZ_STATE.tmp"
		awk -F'\t' -v t="$1" '$1 != t' "$FUZZ_STATE" >"$tmp"
		printf '%s\t%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "$4" "$(date -u +%Y-%m-%dT%H:%MZ)" >>"$tmp"
		mv "$tmp" "$FUZZ_STATE"
	) 9>>"$FUZZ_STATE.lock"
}

# On ^C or a kill, stop the fuzzer and keep the executions it reported.
interrupted() {
	if [ -n "$pid" ]; then
		kill "$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
		got=$(execs "$work/log")
		save "$t" "$hash" $((total + got)) $((secs0 + $(date +%s) - start))
		echo "fuzz-long $pkg $fn: stopped at $((total + got)) executions (kept in $FUZZ_STATE)"
	fi
	exit 130
}
trap interrupted INT TERM

for t in $targets; do
	pkg=${t%%:*} fn=${t##*:}
	hash=$(srchash "$pkg")
	read -r total secs0 <<<"$(state "$t" "$hash")"
	if [ -n "${FUZZ_REPORT:-}" ]; then
		line="$pkg $fn: $total executions in ${secs0}s kept for this source"
		[ "$total" -lt "$FUZZ_EXECS" ] && line="$line (short of $FUZZ_EXECS)" && status=1
		summary+=("$line")
		continue
	fi
	if [ "$total" -ge "$FUZZ_EXECS" ]; then
		line="$pkg $fn: $total executions in ${secs0}s, no failure (recorded earlier)"
		echo "fuzz-long $line"
		summary+=("$line")
		continue
	fi
	bin="$work/$(echo "$pkg" | tr '/.' '__').test"
	# -fuzz at build time instruments the binary for coverage guidance
	# (without it the fuzzer only mutates blindly, and says so).
	if ! "$GO" test -c -fuzz "^$fn\$" -o "$bin" "$pkg"; then
		summary+=("$pkg $fn: does not build")
		status=1
		continue
	fi
	importpath=$("$GO" list "$pkg")
	runs=0 stalls=0 failed=""
	start=$(date +%s)
	[ "$total" -gt 0 ] && echo "fuzz-long $pkg $fn: resuming at $total executions"
	while [ "$total" -lt "$FUZZ_EXECS" ]; do
		n=$((FUZZ_EXECS - total))
		[ "$n" -gt "$FUZZ_CHUNK" ] && n=$FUZZ_CHUNK
		log="$work/log"
		: >"$log"
		(cd "$root/$pkg" && exec "$bin" -test.run '^$' -test.fuzz "^$fn\$" -test.fuzztime "${n}x" \
			-test.parallel 1 -test.fuzzminimizetime 0 -test.fuzzcachedir "$cache/$importpath") >"$log" 2>&1 &
		pid=$!
		last="" quiet=0
		while kill -0 "$pid" 2>/dev/null; do
			sleep 5
			now=$(progress "$log")
			if [ "$now" = "$last" ]; then
				quiet=$((quiet + 5))
			else
				last=$now quiet=0
			fi
			if [ "$quiet" -ge "$FUZZ_STALL" ]; then
				kill "$pid" 2>/dev/null
				stalls=$((stalls + 1))
				break
			fi
		done
		wait "$pid"
		rc=$?
		pid=""
		runs=$((runs + 1))
		got=$(execs "$log")
		if grep -q 'without coverage guidance' "$log"; then
			failed="the binary was built without coverage instrumentation"
			break
		fi
		if [ "$rc" != 0 ] && [ "$quiet" -lt "$FUZZ_STALL" ]; then
			if grep -qE 'Failing input written|panic:|--- FAIL' "$log" &&
				! grep -q 'context deadline exceeded' "$log"; then
				cat "$log"
				failed="FAILED after $((total + got)) executions (input in $pkg/testdata/fuzz/$fn)"
				break
			fi
			# The coordinator's own deadline race (golang/go#75804): count
			# what ran and go on.
			stalls=$((stalls + 1))
		fi
		total=$((total + got))
		save "$t" "$hash" "$total" $((secs0 + $(date +%s) - start))
		echo "fuzz-long $pkg $fn: $total of $FUZZ_EXECS executions (run $runs, $stalls stalled, $(progress "$log"))"
		if [ "$got" = 0 ] && [ "$runs" -ge 3 ] && [ "$stalls" -ge 3 ]; then
			failed="no progress after $runs runs"
			break
		fi
	done
	secs=$((secs0 + $(date +%s) - start))
	rate=$((total / (secs > 0 ? secs : 1)))
	line="$pkg $fn: $total executions in ${secs}s ($rate a second; $runs runs, $stalls stalled; load $(cut -d' ' -f1-3 /proc/loadavg))"
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
echo "fuzz-long summary (FUZZ_EXECS=$FUZZ_EXECS per parser, counts in $FUZZ_STATE):"
for s in "${summary[@]}"; do
	echo "  $s"
done
exit $status
