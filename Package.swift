// swift-tools-version: 6.1
import PackageDescription

let package = Package(
    name: "OfflineSync",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "OfflineSync", targets: ["OfflineSync"]),
        .library(name: "OfflineSyncConformance", targets: ["OfflineSyncConformance"]),
        .library(name: "OfflineSyncBenchmarkKit", targets: ["OfflineSyncBenchmarkKit"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
    ],
    targets: [
        .target(name: "OfflineSync"),
        .target(name: "OfflineSyncConformance", dependencies: ["OfflineSync"]),
        .systemLibrary(name: "CSQLiteBaseline", pkgConfig: "sqlite3", providers: [.apt(["libsqlite3-dev"])]),
        .systemLibrary(name: "CLMDBBaseline", pkgConfig: "lmdb", providers: [.apt(["liblmdb-dev"])]),
        .target(name: "OfflineSyncBenchmarkKit", dependencies: ["OfflineSync", "CSQLiteBaseline", "CLMDBBaseline"]),
        .testTarget(name: "OfflineSyncBenchmarkKitTests", dependencies: ["OfflineSyncBenchmarkKit"]),
        .testTarget(name: "OfflineSyncTests", dependencies: ["OfflineSync", "OfflineSyncConformance"]),
        .testTarget(name: "OfflineSyncConformanceTests", dependencies: ["OfflineSync", "OfflineSyncConformance"]),
    ]
)
