#!/usr/bin/env bash
# What a newcomer and an app developer wait for, measured from a fresh clone on this machine:
# the README's two commands, switching between build, test and run with nothing changed, and an
# app package (one executable using the model plugin, a pipeline file and the inspector, one test target) that
# depends on this clone by path. Prints each figure beside its target. Not part of CI (it takes
# about 20 minutes on 2 cores); run it after a change to Package.swift or the plugins.
#
#   Scripts/build-times.sh
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/storechain-build-times.XXXXXX")
trap 'rm -rf "$work"' EXIT

# The machine's busy and total CPU time so far (jiffies, all cores), from /proc/stat.
cpu_now() { awk '/^cpu /{print $2+$3+$4+$7+$8, $2+$3+$4+$5+$6+$7+$8}' /proc/stat; }

timed() {
    local label=$1 target=$2
    shift 2
    local start=$SECONDS before
    before=$(cpu_now)
    if ! "$@" >"$work/last.log" 2>&1; then
        local kept="${TMPDIR:-/tmp}/storechain-build-times-failed.log"
        cp "$work/last.log" "$kept"
        grep -E '✘|error:' "$kept" | head -20 || true
        echo "FAILED: $label ($*); its whole output is in $kept"
        exit 1
    fi
    local took=$((SECONDS - start)) busy
    # How busy the cores were: a build that leaves them idle waits on something else.
    busy=$(echo "$before $(cpu_now)" | awk '{t = $4 - $2; printf "%d", (t > 0 ? 100 * ($3 - $1) / t : 0)}')
    # Of a `swift test`, how long the tests themselves ran: the rest is building.
    local ran
    ran=$(grep -ao 'Test run with [0-9]* tests.* after [0-9.]* seconds' "$work/last.log" | tail -1 \
        | grep -o '[0-9.]* seconds' || true)
    printf '%-66s %3dm%02ds   target %-4s cores %3d%% busy%s\n' "$label" $((took / 60)) $((took % 60)) "$target" \
        "$busy" "${ran:+, tests ran $ran}"
    # What a build with nothing changed should not do: the files it compiled, by module, and
    # what it linked (a first build's list would be everything, so only later steps print it).
    if [ "${SHOW_COMPILED:-0}" = 1 ]; then
        local compiled linked
        compiled=$(grep -aoE '(Compiling|Emitting module) [A-Za-z0-9_]+' "$work/last.log" | awk '{print $NF}' \
            | sort | uniq -c | sort -rn | awk '{printf "%s%s %d", (NR > 1 ? ", " : ""), $2, $1}')
        linked=$(grep -aoE 'Linking [^ ]+' "$work/last.log" | awk '{print $2}' | sort -u | tr '\n' ' ')
        printf '    compiled: %s; linked: %s\n' "${compiled:-nothing}" "${linked:-nothing}"
    fi
}

git clone -q "$root" "$work/StoreChain"
cd "$work/StoreChain"
timed "swift run storechain demo, fresh clone" "7m" swift run storechain demo
timed "swift test after it" "4m" swift test
timed "swift build after swift test, nothing changed" "30s" swift build
timed "swift test after swift build, nothing changed" "30s" swift test
timed "swift run storechain demo after swift test, nothing changed" "30s" swift run storechain demo

app="$work/App"
mkdir -p "$app/Sources/App" "$app/Tests/AppTests"
cp Examples/Bandcamp/music.model.yml "$app/Sources/App/"
cp Examples/Bandcamp/music.model.yml "$app/Tests/AppTests/"
cat >"$app/Sources/App/app.pipeline.yml" <<'YAML'
model: music.model.yml
handlers:
  - memory-cache: { ttl: 5m }
terminal:
  json-file: { path: music.json }
YAML
cat >"$app/Package.swift" <<SWIFT
// swift-tools-version: 6.1
import PackageDescription

let package = Package(
    name: "App",
    platforms: [.macOS(.v15)],
    dependencies: [.package(path: "$work/StoreChain")],
    targets: [
        .executableTarget(
            name: "App",
            dependencies: [
                .product(name: "StoreChain", package: "StoreChain"),
                .product(name: "StoreChainHTTP", package: "StoreChain"),
                .product(name: "StoreChainPipeline", package: "StoreChain"),
                .product(name: "StoreChainInspector", package: "StoreChain"),
            ],
            resources: [.copy("music.model.yml"), .copy("app.pipeline.yml")],
            plugins: [.plugin(name: "StoreChainModelPlugin", package: "StoreChain")]),
        .testTarget(
            name: "AppTests", dependencies: [.product(name: "StoreChain", package: "StoreChain")],
            resources: [.copy("music.model.yml")],
            plugins: [.plugin(name: "StoreChainModelPlugin", package: "StoreChain")]),
    ]
)
SWIFT
cat >"$app/Sources/App/main.swift" <<'SWIFT'
import Foundation
import StoreChain
import StoreChainHTTP
import StoreChainInspector
import StoreChainPipeline

let file = Bundle.module.url(forResource: "app", withExtension: "pipeline.yml")
print(Band.entityName, file?.lastPathComponent ?? "no pipeline", Pipeline.self, RemoteOptions.self, Inspector.self)
SWIFT
cat >"$app/Tests/AppTests/AppTests.swift" <<'SWIFT'
import StoreChain
import Testing

@Test func theModelPluginGeneratedTheTypes() { #expect(Band.entityName == "Band") }
SWIFT
cd "$app"
timed "app package: first swift build" "5m" swift build
export SHOW_COMPILED=1
timed "app package: swift build again, nothing changed" "30s" swift build
timed "app package: swift test after it" "30s" swift test
timed "app package: swift build after swift test, nothing changed" "30s" swift build
timed "app package: swift test after swift build, nothing changed" "30s" swift test
