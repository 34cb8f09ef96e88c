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
        // Without the Postgres trait: the pipeline's postgres-cache is not benchmarked. Only
        // StoreChainPostgresBenchmarks builds PostgresNIO (and its TLS) in release.
        .package(path: "..", traits: []),
        .package(url: "https://github.com/ordo-one/package-benchmark", from: "1.38.1", traits: ["MallocInterposer"]),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
        .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
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
                .product(name: "StoreChainInspector", package: libraryPackage),
                .product(name: "GRDB", package: "GRDB.swift"),
            ],
            path: "StoreChainBenchmarks",
            swiftSettings: [.enableUpcomingFeature("NonisolatedNonsendingByDefault")],
            plugins: [.plugin(name: "BenchmarkPlugin", package: "package-benchmark")]
        ),
        // Sharing state through PostgreSQL: needs a server (`STORECHAIN_POSTGRES_URL`; start a
        // throwaway cluster with Scripts/postgres.sh).
        .executableTarget(
            name: "StoreChainPostgresBenchmarks",
            dependencies: [
                .product(name: "Benchmark", package: "package-benchmark"),
                .product(name: "StoreChain", package: libraryPackage),
                .product(name: "StoreChainPostgres", package: libraryPackage),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "StoreChainPostgresBenchmarks",
            swiftSettings: [.enableUpcomingFeature("NonisolatedNonsendingByDefault")],
            plugins: [.plugin(name: "BenchmarkPlugin", package: "package-benchmark")]
        ),
    ],
    swiftLanguageModes: [.v6]
)
