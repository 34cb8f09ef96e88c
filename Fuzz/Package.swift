// swift-tools-version: 6.1
import Foundation
import PackageDescription

// The libFuzzer executables. They live in a package of their own so that a fuzzing build
// (`swift build --sanitize=fuzzer`, see Scripts/fuzz.sh) compiles only what they use: in the
// root package it would also build every build-tool plugin's tool with instrumentation.
//
// A path dependency is named by its folder, which is whatever the clone was called.
let storeChain = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .lastPathComponent

let swiftSettings: [SwiftSetting] = [
    .enableUpcomingFeature("NonisolatedNonsendingByDefault"),
    .enableUpcomingFeature("ExistentialAny"),
]

let package = Package(
    name: "StoreChainFuzz",
    platforms: [.macOS(.v15)],
    // Without the Postgres trait: the fuzz targets do not use it.
    dependencies: [.package(path: "..", traits: [])],
    targets: [
        .executableTarget(
            name: "storechain-fuzz",
            dependencies: [.product(name: "StoreChainFuzzing", package: storeChain)],
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "storechain-fuzz-files",
            dependencies: [
                .product(name: "StoreChainFuzzing", package: storeChain),
                .product(name: "StoreChainFileFuzzing", package: storeChain),
            ],
            swiftSettings: swiftSettings
        ),
    ]
)
