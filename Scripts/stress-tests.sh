#!/usr/bin/env bash
# The test suite on a busy machine: runs `swift test` RUNS times with BUSY busy loops beside it
# (each keeps one core spinning, as a build or a browser beside the tests would), and prints how
# often each test failed. A test that fails only here waits by polling or on real time somewhere:
# it should wait for the event it needs instead. Not part of CI (10 runs take about 15 minutes).
#
#   Scripts/stress-tests.sh                    # 10 runs, 2 busy loops
#   RUNS=3 BUSY=1 Scripts/stress-tests.sh
#   FILTER=OutboxAcknowledgementTests Scripts/stress-tests.sh
#
# The shared cache's tests need PostgreSQL: it starts a throwaway cluster (Scripts/postgres.sh)
# unless STORECHAIN_POSTGRES_URL names a server.
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${RUNS:-10}
busy=${BUSY:-2}
filter=${FILTER:-}
logs=$(mktemp -d "${TMPDIR:-/tmp}/storechain-stress.XXXXXX")

loops=()
postgres_dir=""
cleanup() {
    for pid in "${loops[@]}"; do kill "$pid" 2>/dev/null || true; done
    if [ -n "$postgres_dir" ]; then bash Scripts/postgres.sh stop "$postgres_dir"; fi
}
trap cleanup EXIT

if [ -z "${STORECHAIN_POSTGRES_URL:-}" ]; then
    eval "$(bash Scripts/postgres.sh start)"
    postgres_dir=$STORECHAIN_POSTGRES_DIR
fi

echo "building the tests"
swift build --build-tests --enable-all-traits >"$logs/build.log" 2>&1 || {
    tail -30 "$logs/build.log"
    echo "error: the build failed; its whole output is in $logs/build.log"
    exit 1
}

for _ in $(seq "$busy"); do
    (while :; do :; done) &
    loops+=("$!")
done
echo "$busy busy loops beside the tests; $runs runs; logs in $logs"

failed_runs=0
for run in $(seq "$runs"); do
    start=$SECONDS
    arguments=(--skip-build --enable-all-traits)
    if [ -n "$filter" ]; then arguments+=(--filter "$filter"); fi
    if timeout --signal=INT --kill-after=30s 20m swift test "${arguments[@]}" >"$logs/run-$run.log" 2>&1; then
        outcome="passed"
    else
        outcome="FAILED"
        failed_runs=$((failed_runs + 1))
    fi
    echo "run $run: $outcome in $((SECONDS - start)) s"
done

# Swift Testing ends a failed test with "✘ Test name() failed after …" (or "… with N test cases
# failed after …"); XCTest says "Test Case '…' failed".
echo
echo "failures per test over $runs runs:"
grep -hE "^✘ Test .* failed after|Test Case '[^']+' failed" "$logs"/run-*.log 2>/dev/null \
    | sed -E "s/^✘ Test (.*) (with [0-9]+ test cases? )?failed after.*/\1/; s/.*Test Case '([^']+)' failed.*/\1/" \
    | sort | uniq -c | sort -rn || true
echo "$failed_runs of $runs runs failed"
[ "$failed_runs" -eq 0 ]
