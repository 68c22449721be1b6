// swift-tools-version: 6.1
import PackageDescription

let package = Package(
    name: "OfflineSync",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "OfflineSync", targets: ["OfflineSync"]),
        .library(name: "OfflineSyncConformance", targets: ["OfflineSyncConformance"]),
        .library(name: "OfflineSyncLMDB", targets: ["OfflineSyncLMDB"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
    ],
    targets: [
        .target(name: "OfflineSync"),
        .target(name: "OfflineSyncConformance", dependencies: ["OfflineSync"]),
        .testTarget(name: "OfflineSyncTests", dependencies: ["OfflineSync", "OfflineSyncConformance"]),
        .systemLibrary(name: "CLMDB", pkgConfig: "lmdb", providers: [.apt(["liblmdb-dev"])]),
        .target(name: "OfflineSyncLMDB", dependencies: ["OfflineSync", "CLMDB"]),
        .executableTarget(name: "LMDBMeasure", dependencies: ["OfflineSync", "OfflineSyncLMDB", "CLMDB"]),
        .testTarget(name: "OfflineSyncLMDBTests", dependencies: ["OfflineSync", "OfflineSyncLMDB", "OfflineSyncConformance", "CLMDB"]),
        .testTarget(name: "OfflineSyncConformanceTests", dependencies: ["OfflineSync", "OfflineSyncConformance", "OfflineSyncLMDB"]),
    ]
)
