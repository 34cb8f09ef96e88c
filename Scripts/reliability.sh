#!/usr/bin/env bash
# The reliability suite: crash kills (of cache and store writers, and of saves and replays
# through an outbox), damaged cache files, misbehaving backends, a concurrent
# soak, the object-graph test against a reference graph, fuzzing and, with TSAN=1, the whole test suite under ThreadSanitizer. Each part is a test
# that `swift test` also runs in a short form; this script runs them longer and prints a summary.
#
#   Scripts/reliability.sh                      # defaults below, about half an hour
#   KILLS=1000 SOAK_OPERATIONS=2000 FUZZ_SECONDS=600 Scripts/reliability.sh
#   CRASH_SEED=123 KILLS=1 Scripts/reliability.sh   # replay one crash run
#   GRAPH_SEED=123 GRAPH_OPERATIONS=300 Scripts/reliability.sh  # replay one object-graph seed
#   GRAPH_OBSERVE=0 Scripts/reliability.sh      # the object graph without observations
#   FUZZ_TARGETS="predicate records" Scripts/reliability.sh  # fuzz only what builds in a minute
#   FUZZ_SECONDS=0 Scripts/reliability.sh       # no fuzzing
#   FUZZ_MIN_EXECUTIONS=0 Scripts/reliability.sh  # one fuzzing round, however many executions
#   TSAN=1 Scripts/reliability.sh               # adds swift test --sanitize=thread (a full rebuild)
set -euo pipefail
cd "$(dirname "$0")/.."

KILLS=${KILLS:-200}
DAMAGE_SEEDS=${DAMAGE_SEEDS:-200}
SOAK_OPERATIONS=${SOAK_OPERATIONS:-300}
# Steps of the object-graph test per seed and chain (3 seeds, 4 chains): 1,700 is 20,400 steps.
GRAPH_OPERATIONS=${GRAPH_OPERATIONS:-1700}
FUZZ_SECONDS=${FUZZ_SECONDS:-60}
# Fuzzing goes on in rounds until the targets together have run this many inputs.
FUZZ_MIN_EXECUTIONS=${FUZZ_MIN_EXECUTIONS:-10000000}
log=$(mktemp)
trap 'rm -f "$log"' EXIT
failed=0

part() {
    local name=$1
    shift
    printf '\n==> %s\n' "$name"
    set +e
    env "$@" 2>&1 | tee -a "$log" | grep -E '^(✘|reliability:|storechain-fuzz:|WARNING: ThreadSanitizer)|Test run with'
    local status=${PIPESTATUS[0]}
    set -e
    if [ "$status" -ne 0 ]; then
        echo "FAILED: $name"
        failed=1
    fi
}

# Every trait, as .ci/run builds (another set of traits would rebuild every module).
swift build --build-tests --enable-all-traits 2>&1 | tail -1
part "crash safety ($KILLS kills)" STORECHAIN_CRASH_KILLS="$KILLS" STORECHAIN_CRASH_SEED="${CRASH_SEED:-}" \
    swift test --skip-build --enable-all-traits --filter 'CrashSafetyTests|OutboxCrashTests'
part "damaged and full cache files ($DAMAGE_SEEDS byte-flip seeds)" STORECHAIN_DAMAGE_SEEDS="$DAMAGE_SEEDS" \
    swift test --skip-build --enable-all-traits --filter 'DiskCacheDamageTests|DiskCacheTests|SQLiteStoreTests'
part "bad backends and hostile values" \
    swift test --skip-build --enable-all-traits --filter 'BadBackendTests|SecretsTests|RequestTemplateTests|SQLPredicateTests|JSONParserTests'
part "soak ($SOAK_OPERATIONS operations per task)" STORECHAIN_SOAK_OPERATIONS="$SOAK_OPERATIONS" \
    swift test --skip-build --enable-all-traits --filter SoakTests
part "object graph ($GRAPH_OPERATIONS steps a seed and chain)" STORECHAIN_GRAPH_OPERATIONS="$GRAPH_OPERATIONS" \
    STORECHAIN_GRAPH_SEED="${GRAPH_SEED:-}" STORECHAIN_GRAPH_OBSERVE="${GRAPH_OBSERVE:-1}" \
    swift test --skip-build --enable-all-traits --filter ObjectGraphTests
if [ "$FUZZ_SECONDS" != 0 ]; then
    part "fuzzing (${FUZZ_SECONDS}s a target a round, until $FUZZ_MIN_EXECUTIONS executions)" \
        FUZZ_SECONDS="$FUZZ_SECONDS" FUZZ_MIN_EXECUTIONS="$FUZZ_MIN_EXECUTIONS" bash Scripts/fuzz.sh
fi
if [ "${TSAN:-0}" = 1 ]; then
    # STORECHAIN_TSAN swaps Synchronization.Mutex, whose futex calls ThreadSanitizer cannot see,
    # for a pthread lock it can (Sources/StoreChain/Support/Locked.swift).
    swift build --build-tests --enable-all-traits --sanitize=thread -Xswiftc -DSTORECHAIN_TSAN --scratch-path .build-tsan 2>&1 | tail -1
    part "whole suite under ThreadSanitizer" swift test --skip-build --enable-all-traits --sanitize=thread --scratch-path .build-tsan
    echo "reliability: ThreadSanitizer reports: $(grep -c 'WARNING: ThreadSanitizer' "$log" || true)" | tee -a "$log"
fi

printf '\n==> summary\n'
grep -E '^reliability:' "$log" || true
damage=$(grep -Eo 'randomByteFlipsNeverGiveAWrongAnswer\(seed:\) with [0-9]+ test cases passed' "$log" |
    grep -Eo '[0-9]+ test cases' || echo "none")
echo "reliability: damaged files recovered: $damage"
grep -Eo 'everyMisbehaviourEndsInATypedError\(_:\) with [0-9]+ test cases passed' "$log" |
    sed -E 's/.* with ([0-9]+) test cases passed/reliability: bad-backend cases passed: \1/' || true
if [ "$failed" -ne 0 ]; then
    echo "reliability: FAILED (see above)"
    exit 1
fi
echo "reliability: all parts passed"
