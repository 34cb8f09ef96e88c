// swift-tools-version: 6.1
import PackageDescription

/// Every target runs in Swift 6 mode with the caller's executor by default (see DESIGN.md,
/// "Concurrency and speed"): without it each call from the main actor pays two executor hops.
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
        .executable(name: "storechain", targets: ["storechain"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/jpsim/Yams", from: "6.2.2"),
    ],
    targets: [
        .target(
            name: "StoreChain",
            dependencies: [.product(name: "Logging", package: "swift-log")],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "StoreChainPipeline",
            dependencies: ["StoreChain", .product(name: "Yams", package: "Yams")],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "StoreChainTesting",
            dependencies: ["StoreChain"],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "StoreChainDemoBackend",
            dependencies: ["StoreChain"],
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "storechain",
            dependencies: [
                "StoreChain",
                "StoreChainPipeline",
                "StoreChainDemoBackend",
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
        .testTarget(
            name: "CustomHandlerExampleTests",
            dependencies: ["CustomHandlerExample", "StoreChainTesting"],
            path: "Examples/CustomHandler/Tests",
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "StoreChainTests",
            dependencies: ["StoreChain", "StoreChainTesting"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "StoreChainPipelineTests",
            dependencies: ["StoreChainPipeline"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "StoreChainCLITests",
            dependencies: ["storechain", "StoreChain", "StoreChainPipeline", "StoreChainDemoBackend"],
            swiftSettings: swiftSettings
        ),
    ],
    swiftLanguageModes: [.v6]
)
