// swift-tools-version: 6.1
import PackageDescription

/// Every target runs in Swift 6 mode with the caller's executor by default (see
/// Docs/Architecture.md, Invariants 7): without it each call from the main actor pays two
/// executor hops.
let swiftSettings: [SwiftSetting] = [
    .enableUpcomingFeature("NonisolatedNonsendingByDefault"),
    .enableUpcomingFeature("ExistentialAny"),
]

let package = Package(
    name: "StoreChain",
    platforms: [.macOS(.v15), .iOS(.v18)],
    products: [
        .library(name: "StoreChain", targets: ["StoreChain"]),
        .library(name: "StoreChainPipeline", targets: ["StoreChainPipeline"]),
        .library(name: "StoreChainTesting", targets: ["StoreChainTesting"]),
        .library(name: "StoreChainHTTP", targets: ["StoreChainHTTP"]),
        .library(name: "StoreChainSQLite", targets: ["StoreChainSQLite"]),
        .library(name: "StoreChainPostgres", targets: ["StoreChainPostgres"]),
        .library(name: "StoreChainDemoBackend", targets: ["StoreChainDemoBackend"]),
        // The inspector's web page, a product of its own: apps that do not want it do not build it.
        .library(name: "StoreChainInspector", targets: ["StoreChainInspector"]),
        // Fuzz targets, for the fuzzers in Fuzz/ (a package of their own, so that a fuzzing
        // build instruments only what they use) and for fuzzing your own handlers.
        .library(name: "StoreChainFuzzing", targets: ["StoreChainFuzzing"]),
        .library(name: "StoreChainFileFuzzing", targets: ["StoreChainFileFuzzing"]),
        .executable(name: "storechain", targets: ["storechain"]),
        .plugin(name: "StoreChainModelPlugin", targets: ["StoreChainModelPlugin"]),
        .plugin(name: "StoreChainValidatePlugin", targets: ["StoreChainValidatePlugin"]),
    ],
    traits: [
        // Opt-in, as swift-configuration's heavier integrations are: most apps never want a
        // PostgreSQL client, swift-crypto and a second BoringSSL. `.ci/run` enables every trait.
        .trait(
            name: "Postgres",
            description: "postgres-cache and shared rate limits in pipeline files (builds PostgresNIO and its TLS)"),
        .default(enabledTraits: []),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/jpsim/Yams", from: "6.2.2"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
        // No traits: with two enabled (its defaults), SwiftPM 6.3 writes their `-D` flags in an
        // order that changes between runs, so every switch between `swift build` and `swift test`
        // recompiled Hummingbird and HummingbirdCore (105 files) in an app using the inspector.
        // Nothing here uses what they add (swift-configuration support, full Foundation).
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1", traits: []),
        // Hummingbird's own dependency, named so the demo backend can stop its server gracefully.
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.8.0"),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-distributed-tracing", from: "1.7.3"),
        .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.2"),
    ],
    targets: [
        .target(
            name: "StoreChain",
            dependencies: [
                .product(name: "Logging", package: "swift-log"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
            ],
            swiftSettings: swiftSettings
        ),
        // Model files (and the located YAML reading pipeline files share), apart from the
        // pipeline so that the model plugin's code generator builds without HTTP, SQLite and
        // PostgreSQL: the plugin's tool is built for the host, a second copy of all it uses.
        .target(
            name: "StoreChainModelFile",
            dependencies: ["StoreChain", .product(name: "Yams", package: "Yams")],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "StoreChainPipeline",
            dependencies: [
                "StoreChain", "StoreChainModelFile", "StoreChainHTTP", "StoreChainSQLite",
                .target(name: "StoreChainPostgres", condition: .when(traits: ["Postgres"])),
                .product(name: "Yams", package: "Yams"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "StoreChainHTTP",
            dependencies: [
                "StoreChain",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        .systemLibrary(name: "CZlib", providers: [.apt(["zlib1g-dev"])]),
        .target(
            name: "StoreChainSQLite",
            dependencies: [
                "StoreChain", "CZlib", .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "GRDBSQLite", package: "GRDB.swift"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "StoreChainPostgres",
            dependencies: [
                "StoreChain", "StoreChainSQLite", .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "StoreChainTesting",
            dependencies: ["StoreChain", .product(name: "Logging", package: "swift-log")],
            swiftSettings: swiftSettings
        ),
        // What this package's own tests share and users have no use for (a throwaway PostgreSQL
        // cluster): a target, not a product, so it is not part of the public API.
        .target(name: "StoreChainTestSupport", path: "Tests/Support", swiftSettings: swiftSettings),
        .target(
            name: "StoreChainDemoBackend",
            dependencies: [
                "StoreChain",
                "StoreChainPipeline",
                "StoreChainHTTP",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "StoreChainInspector",
            dependencies: [
                "StoreChain", "StoreChainPipeline",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
                .product(name: "InMemoryTracing", package: "swift-distributed-tracing"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
            ],
            resources: [.copy("Resources")],
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "storechain",
            dependencies: [
                "StoreChainInspector",
                "StoreChain",
                "StoreChainPipeline",
                "StoreChainDemoBackend",
                "StoreChainHTTP",
                "StoreChainSQLite",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "CustomHandlerExample",
            dependencies: ["StoreChain", "StoreChainPipeline"],
            path: "Examples/CustomHandler/Sources",
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "storechain-crash-writer",
            dependencies: ["StoreChain", "StoreChainSQLite", "StoreChainTesting"],
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "storechain-shared-client",
            dependencies: ["StoreChain", "StoreChainPipeline"],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "StoreChainFuzzing",
            dependencies: ["StoreChain", "StoreChainTesting"],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "StoreChainFileFuzzing",
            dependencies: ["StoreChain", "StoreChainFuzzing", "StoreChainHTTP", "StoreChainPipeline"],
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "storechain-codegen",
            dependencies: ["StoreChain", "StoreChainModelFile"],
            path: "Sources/StoreChainCodegen",
            swiftSettings: swiftSettings
        ),
        .plugin(
            name: "StoreChainModelPlugin",
            capability: .buildTool(),
            dependencies: ["storechain-codegen"]
        ),
        .plugin(
            name: "StoreChainValidatePlugin",
            capability: .command(
                intent: .custom(
                    verb: "storechain-validate", description: "Check every pipeline and model file in the package")
            )
            // No dependency on `storechain`: a plugin's dependencies are built for the host with every
            // build, a second copy of the whole package. The plugin builds the tool when it runs.
        ),
        .executableTarget(
            name: "BandcampExample",
            dependencies: ["StoreChain", "StoreChainPipeline", "StoreChainDemoBackend"],
            path: "Examples/Bandcamp",
            exclude: [
                "README.md", "live.pipeline.yml", "shared.pipeline.yml", "v1.pipeline.yml", "v2.pipeline.yml",
                "v3.pipeline.yml",
            ],
            sources: ["Sources"],
            resources: [.copy("music.model.yml")],
            swiftSettings: swiftSettings,
            plugins: ["StoreChainModelPlugin"]
        ),
        .executableTarget(
            name: "PalettesExample",
            dependencies: [
                "StoreChain", "StoreChainPipeline", .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
            ],
            path: "Examples/Palettes/Sources",
            swiftSettings: swiftSettings
        ),
        .target(
            name: "DictionaryTerminalExample",
            dependencies: ["StoreChain"],
            path: "Examples/DictionaryTerminal/Sources",
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "DictionaryTerminalExampleTests",
            dependencies: ["DictionaryTerminalExample", "StoreChainTesting"],
            path: "Examples/DictionaryTerminal/Tests",
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "CustomHandlerExampleTests",
            dependencies: ["CustomHandlerExample", "StoreChainTesting"],
            path: "Examples/CustomHandler/Tests",
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "StoreChainTests",
            dependencies: [
                "StoreChain", "StoreChainTesting", .product(name: "MetricsTestKit", package: "swift-metrics"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "InMemoryTracing", package: "swift-distributed-tracing"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "StoreChainPipelineTests",
            dependencies: [
                "StoreChainTestSupport",
                "StoreChainPipeline", "StoreChain", "StoreChainHTTP", "StoreChainSQLite", "StoreChainTesting",
                "StoreChainDemoBackend", "StoreChainInspector",
                .product(name: "InMemoryTracing", package: "swift-distributed-tracing"),
            ],
            resources: [.copy("Fixtures")],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "StoreChainHTTPTests",
            dependencies: [
                "StoreChainHTTP", "StoreChainTesting", .product(name: "MetricsTestKit", package: "swift-metrics"),
                .product(name: "InMemoryTracing", package: "swift-distributed-tracing"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "StoreChainSQLiteTests",
            dependencies: [
                "StoreChainTestSupport",
                "StoreChain", "StoreChainSQLite", "StoreChainTesting",
                .target(name: "StoreChainPostgres", condition: .when(traits: ["Postgres"])),
                .product(name: "GRDB", package: "GRDB.swift"),
            ],
            swiftSettings: swiftSettings
        ),
        // Its files compile only with the Postgres trait (`#if Postgres`).
        .testTarget(
            name: "StoreChainPostgresTests",
            dependencies: [
                "StoreChainTestSupport",
                "StoreChain", "StoreChainSQLite", "StoreChainTesting",
                .target(name: "StoreChainPostgres", condition: .when(traits: ["Postgres"])),
                .product(name: "PostgresNIO", package: "postgres-nio", condition: .when(traits: ["Postgres"])),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "StoreChainIntegrationTests",
            dependencies: [
                "StoreChainDemoBackend", "StoreChainHTTP", "StoreChainSQLite", "StoreChainPipeline",
                "StoreChainTesting", .product(name: "MetricsTestKit", package: "swift-metrics"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "StoreChainFuzzingTests",
            dependencies: ["StoreChain", "StoreChainFuzzing", "StoreChainFileFuzzing"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "StoreChainAppTests",
            dependencies: [
                "StoreChain", "StoreChainHTTP", "StoreChainPipeline", "StoreChainSQLite", "StoreChainTesting",
                "CustomHandlerExample", "StoreChainInspector",
            ],
            resources: [.copy("music.model.yml")],
            swiftSettings: swiftSettings,
            plugins: ["StoreChainModelPlugin"]
        ),
        // Not a dependency of StoreChainCLITests, though CodegenTests runs it: StoreChainAppTests
        // uses the plugin, which links its own build of the tool into the test bundle, and both
        // builds in one bundle fail to link (duplicate symbols). `swift test` builds it anyway.
        .testTarget(
            name: "StoreChainCLITests",
            dependencies: [
                "StoreChainTestSupport",
                "storechain", "storechain-crash-writer", "storechain-shared-client", "StoreChain", "StoreChainPipeline",
                "StoreChainDemoBackend", "StoreChainHTTP", "StoreChainSQLite", "StoreChainTesting",
                .target(name: "StoreChainPostgres", condition: .when(traits: ["Postgres"])),
            ],
            swiftSettings: swiftSettings
        ),
    ],
    swiftLanguageModes: [.v6]
)
