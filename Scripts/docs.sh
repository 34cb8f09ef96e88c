#!/usr/bin/env bash
# Builds the DocC documentation of StoreChain, StoreChainHTTP, StoreChainSQLite,
# StoreChainPipeline and StoreChainTesting (their catalogs in Sources/<Module>/<Module>.docc and
# the doc comments of their public API) from the modules of the debug build, into
# .build/docs/<Module>.doccarchive. A broken link or an unknown symbol in an article fails the
# run, and so does a public declaration without a doc comment (Scripts/doc-coverage.py).
#
#   Scripts/docs.sh                  # builds first if needed
#   docc preview Sources/StoreChain/StoreChain.docc --additional-symbol-graph-dir .build/symbol-graphs/StoreChain
set -euo pipefail
cd "$(dirname "$0")/.."

# Every trait, as .ci/run builds (another set of traits would rebuild every module).
swift build --build-tests --enable-all-traits 2>&1 | tail -1
bin=$(swift build --enable-all-traits --show-bin-path)
triple=$(swiftc -print-target-info | python3 -c 'import json, sys; print(json.load(sys.stdin)["target"]["triple"])')
# The C modules the Swift modules import: those the build generated module maps for (the host
# tools' copies, `*-tool.build`, left out) and those that bring their own (GRDB's system SQLite,
# swift-numerics' shims, our zlib shim).
includes=(-I "$bin/Modules")
while IFS= read -r map; do includes+=(-Xcc "-fmodule-map-file=$map"); done < <(
    find "$bin" -mindepth 2 -maxdepth 2 -path '*.build/module.modulemap' ! -path '*-tool.build/*'
    find .build/checkouts/*/Sources Sources -maxdepth 3 -name module.modulemap)
mkdir -p .build/docs

for module in StoreChain StoreChainHTTP StoreChainSQLite StoreChainPipeline StoreChainTesting; do
    graphs=.build/symbol-graphs/$module
    rm -rf "$graphs" && mkdir -p "$graphs"
    swift symbolgraph-extract -module-name "$module" -target "$triple" "${includes[@]}" \
        -minimum-access-level public -output-dir "$graphs"
    docc convert "Sources/$module/$module.docc" --fallback-display-name "$module" \
        --fallback-bundle-identifier "org.storechain.$module" --additional-symbol-graph-dir "$graphs" \
        --output-path ".build/docs/$module.doccarchive" --warnings-as-errors
    echo "docs: $module → .build/docs/$module.doccarchive"
done

# Every public declaration has a doc comment (a witness of a documented requirement aside), and
# every public type is named in its module's catalog or the README.
python3 Scripts/doc-coverage.py .build/symbol-graphs
