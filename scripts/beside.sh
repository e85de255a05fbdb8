#!/usr/bin/env bash
# Runs two test commands at once, one beside the other, where neither times anything (docs/
# testing.md, "Parallel only where nothing is timed"): BESIDE in the background, its output
# into LOG and printed whole when both have ended; MAIN in the foreground as it runs. Exits
# non-zero when either failed, saying which.
#   scripts/beside.sh LOG 'BESIDE' MAIN ARGS...
set -uo pipefail
log=$1 beside=$2
shift 2
mkdir -p "$(dirname "$log")"
# Its own process group (setsid), so that stopping it stops everything it started.
setsid bash -c "$beside" >"$log" 2>&1 &
pid=$!
# Stopped together: Ctrl-C or a CI timeout takes the background command with it.
trap 'kill -- "-$pid" 2>/dev/null; wait "$pid" 2>/dev/null; exit 130' INT TERM
"$@"
main=$?
wait "$pid"
other=$?
trap - INT TERM
echo "---- beside it: $beside (output kept in $log)"
cat "$log"
if [ "$other" -ne 0 ]; then
    echo "beside.sh: '$beside' failed (exit $other)" >&2
fi
if [ "$main" -ne 0 ]; then
    echo "beside.sh: '$*' failed (exit $main)" >&2
fi
[ "$main" -eq 0 ] && [ "$other" -eq 0 ]
