// swift-tools-version: 6.1
import Foundation
import PackageDescription

// A path dependency's identity is the name of its directory, which differs between checkouts
// (a clone, a worktree), so it is computed from where this manifest lives.
let offlineSync = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .lastPathComponent.lowercased()

// The OfflineSync package's name for `package` access: its identity as a C99 identifier, as SwiftPM
// derives it (`wt-arch` → `wt_arch`).
let offlineSyncPackageName: String = {
    let characters = offlineSync.unicodeScalars.map { scalar -> Character in
        scalar.properties.isAlphabetic && scalar.isASCII || ("0"..."9").contains(scalar) || scalar == "_"
            ? Character(scalar) : "_"
    }
    let name = String(characters)
    return name.first?.isNumber == true ? "_" + name : name
}()

// The benchmark suite is its own package (as in swift-nio) so that users of OfflineSync never
// fetch the benchmark tool or GRDB. Run it with `swift package benchmark` from this directory.
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
                .product(name: "OfflineSyncSQLite", package: offlineSync),
                .product(name: "OfflineSyncSQLCipher", package: offlineSync),
                .product(name: "OfflineSyncLMDB", package: offlineSync),
                .product(name: "OfflineSyncPostgres", package: offlineSync),
            ],
            path: "Benchmarks/OfflineSyncBenchmarks",
            // `Scenarios` is a symbolic link to ../Sources/offline-sync/Benchmarking: the scenarios
            // and raw C baselines of `offline-sync bench`, compiled here too so both run the same
            // code without a benchmark product in the library. The raw baselines call the backends'
            // `package` API (the SQL engine's C function table, LMDB's record codec) to do exactly
            // the storage work the stores do, so this target joins OfflineSync's package name instead
            // of its own (`packageAccess: false` keeps SwiftPM from passing this package's).
            packageAccess: false,
            swiftSettings: [
                .unsafeFlags(["-package-name", offlineSyncPackageName]),
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
