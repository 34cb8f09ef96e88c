// swift-tools-version: 6.1
import PackageDescription

import struct Foundation.URL

/// SwiftPM names a path dependency after its folder, so the library's package is known by the
/// name of the folder this repository is checked out in.
let libraryPackage = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .lastPathComponent

/// Benchmarks live in their own package so the library's build and tests do not pay for
/// package-benchmark. Run them with `swift package benchmark` in this folder.
let package = Package(
    name: "StoreChainBenchmarks",
    platforms: [.macOS(.v15)],
    dependencies: [
        // Without the Postgres trait: no benchmark uses it, and it would build PostgresNIO and
        // BoringSSL in release on every run.
        .package(path: "..", traits: []),
        .package(url: "https://github.com/ordo-one/package-benchmark", from: "1.38.1", traits: ["MallocInterposer"]),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
    ],
    targets: [
        .executableTarget(
            name: "StoreChainBenchmarks",
            dependencies: [
                .product(name: "Benchmark", package: "package-benchmark"),
                .product(name: "StoreChain", package: libraryPackage),
                .product(name: "StoreChainHTTP", package: libraryPackage),
                .product(name: "StoreChainSQLite", package: libraryPackage),
                .product(name: "StoreChainDemoBackend", package: libraryPackage),
                .product(name: "GRDB", package: "GRDB.swift"),
            ],
            path: "StoreChainBenchmarks",
            swiftSettings: [.enableUpcomingFeature("NonisolatedNonsendingByDefault")],
            plugins: [.plugin(name: "BenchmarkPlugin", package: "package-benchmark")]
        )
    ],
    swiftLanguageModes: [.v6]
)
