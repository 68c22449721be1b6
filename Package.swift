// swift-tools-version: 6.1
import PackageDescription

let package = Package(
    name: "OfflineSync",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "OfflineSync", targets: ["OfflineSync"]),
        .library(name: "OfflineSyncConformance", targets: ["OfflineSyncConformance"]),
        .library(name: "OfflineSyncStores", targets: ["OfflineSyncStores"]),
        .executable(name: "offline-sync", targets: ["offline-sync"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
    ],
    targets: [
        .target(name: "OfflineSync"),
        .target(name: "OfflineSyncConformance", dependencies: ["OfflineSync"]),
        .target(name: "OfflineSyncStores", dependencies: ["OfflineSync"]),
        .executableTarget(
            name: "offline-sync",
            dependencies: [
                "OfflineSync", "OfflineSyncStores", "OfflineSyncConformance",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .testTarget(name: "OfflineSyncTests", dependencies: ["OfflineSync", "OfflineSyncConformance"]),
        .testTarget(name: "OfflineSyncConformanceTests", dependencies: ["OfflineSync", "OfflineSyncConformance"]),
        .testTarget(name: "OfflineSyncConfigurationTests", dependencies: ["OfflineSync", "OfflineSyncStores"]),
        .testTarget(name: "OfflineSyncCLITests", dependencies: ["offline-sync", "OfflineSync", "OfflineSyncStores"]),
    ]
)
