#!/usr/bin/env bash
# Builds the libFuzzer executables with fuzzing and AddressSanitizer instrumentation and runs
# each target for a fixed time, starting from the seed corpus in Fuzz/Corpus and every input
# that ever crashed (Fuzz/Regressions). A crash leaves the input in Fuzz/Crashes/: fix the
# defect, then move the file to Fuzz/Regressions/<target>/ so `swift test` replays it for good.
#
# Rounds of FUZZ_SECONDS a target go on until the targets together have run
# FUZZ_MIN_EXECUTIONS inputs (one round when it is 0), each round starting from the corpus the
# last one grew.
#
#   Scripts/fuzz.sh                                   # every target, 60 s each
#   FUZZ_SECONDS=600 FUZZ_TARGETS=predicate Scripts/fuzz.sh
#   FUZZ_TARGETS="predicate records" Scripts/fuzz.sh  # core targets only: a one-minute build
#   FUZZ_MIN_EXECUTIONS=10000000 Scripts/fuzz.sh      # rounds until 10 million executions
set -euo pipefail
cd "$(dirname "$0")/.."

FUZZ_SECONDS=${FUZZ_SECONDS:-60}
FUZZ_MIN_EXECUTIONS=${FUZZ_MIN_EXECUTIONS:-0}
FUZZ_MAX_ROUNDS=${FUZZ_MAX_ROUNDS:-1000}
FUZZ_TARGETS=${FUZZ_TARGETS:-"predicate records model-file pipeline remote-records"}
core_targets=" predicate records "
scratch=Fuzz/.build-fuzz
mkdir -p Fuzz/Crashes

executable_for() {
    if [[ "$core_targets" == *" $1 "* ]]; then echo storechain-fuzz; else echo storechain-fuzz-files; fi
}

built=""
failed=0
declare -A corpus
for target in $FUZZ_TARGETS; do
    product=$(executable_for "$target")
    if [[ "$built" != *" $product "* ]]; then
        echo "building $product with --sanitize=fuzzer --sanitize=address"
        build_log=$(mktemp)
        if ! swift build --package-path Fuzz --product "$product" --sanitize=fuzzer --sanitize=address \
            --scratch-path "$scratch" >"$build_log" 2>&1; then
            grep -E 'error' "$build_log" | head -20
            echo "reliability: fuzz: building $product failed"
            exit 1
        fi
        tail -1 "$build_log"
        rm -f "$build_log"
        built="$built $product "
    fi
    corpus[$target]=$(mktemp -d)
    cp Fuzz/Corpus/"$target"/* "${corpus[$target]}"/
    if [ -d Fuzz/Regressions/"$target" ]; then cp Fuzz/Regressions/"$target"/* "${corpus[$target]}"/ 2>/dev/null || true; fi
done
trap 'for dir in "${corpus[@]}"; do rm -rf "$dir"; done' EXIT

total=0
round=0
while :; do
    round=$((round + 1))
    for target in $FUZZ_TARGETS; do
        binary="$scratch/debug/$(executable_for "$target")"
        dict=()
        if [ -f Fuzz/"$target".dict ]; then dict=(-dict=Fuzz/"$target".dict); fi
        output=$(mktemp)
        set +e
        # Swift's runtime keeps metadata for the life of the process, which LeakSanitizer would
        # report as leaks; memory errors and crashes are what these runs look for.
        ASAN_OPTIONS=detect_leaks=0 STORECHAIN_FUZZ_TARGET="$target" "$binary" "${corpus[$target]}" "${dict[@]}" \
            -max_total_time="$FUZZ_SECONDS" -timeout=10 -rss_limit_mb=4096 -max_len=8192 \
            -artifact_prefix=Fuzz/Crashes/"$target"- -print_final_stats=1 >"$output" 2>&1
        status=$?
        set -e
        runs=$(grep -Eo '^stat::number_of_executed_units: *[0-9]+' "$output" | grep -Eo '[0-9]+$' || echo 0)
        total=$((total + runs))
        if [ "$status" -eq 0 ]; then
            echo "reliability: fuzz $target (round $round): $runs executions in ${FUZZ_SECONDS}s, 0 crashes"
        else
            failed=1
            grep -E 'storechain-fuzz:|ERROR:|SUMMARY:|Test unit written|Fatal error' "$output" | head -20
            echo "reliability: fuzz $target (round $round): $runs executions, 1 crash (input in Fuzz/Crashes/)"
        fi
        rm -f "$output"
    done
    if [ "$failed" -ne 0 ] || [ "$total" -ge "$FUZZ_MIN_EXECUTIONS" ] || [ "$round" -ge "$FUZZ_MAX_ROUNDS" ]; then break; fi
done
echo "reliability: fuzz: $total executions in all over $round round(s) (wanted at least $FUZZ_MIN_EXECUTIONS)"
if [ "$total" -lt "$FUZZ_MIN_EXECUTIONS" ] && [ "$failed" -eq 0 ]; then
    echo "reliability: fuzz: stopped after FUZZ_MAX_ROUNDS=$FUZZ_MAX_ROUNDS rounds short of the executions wanted"
    failed=1
fi
exit "$failed"
