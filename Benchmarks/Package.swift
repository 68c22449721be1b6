// swift-tools-version: 6.1
import Foundation
import PackageDescription

// A path dependency's identity is the name of its directory, which differs between checkouts
// (a clone, a worktree), so it is computed from where this manifest lives.
let offlineSync = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .lastPathComponent.lowercased()

// The benchmark suite is its own package (as in swift-nio) so that users of OfflineSync never
// fetch the benchmark tool or GRDB. It runs the scenarios of `offline-sync bench`, from the
// OfflineSyncBenchmarking product, plus GRDB doing the same storage work. Run it with
// `swift package benchmark` from this directory.
let package = Package(
    name: "benchmarks",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(path: "../"),
        .package(url: "https://github.com/ordo-one/benchmark", from: "1.38.1", traits: ["MallocInterposer"]),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
    ],
    targets: [
        .executableTarget(
            name: "OfflineSyncBenchmarks",
            dependencies: [
                .product(name: "Benchmark", package: "benchmark"),
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "OfflineSync", package: offlineSync),
                .product(name: "OfflineSyncBenchmarking", package: offlineSync),
            ],
            path: "Benchmarks/OfflineSyncBenchmarks",
            swiftSettings: [
                // The upcoming features every target of the OfflineSync package turns on.
                .enableUpcomingFeature("ExistentialAny"),
                .enableUpcomingFeature("MemberImportVisibility"),
                .enableUpcomingFeature("InternalImportsByDefault"),
            ],
            plugins: [
                .plugin(name: "BenchmarkPlugin", package: "benchmark")
            ]
        )
    ]
)
