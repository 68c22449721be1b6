// swift-tools-version: 6.1
import PackageDescription

let package = Package(
    name: "OfflineSync",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "OfflineSync", targets: ["OfflineSync"]),
        .library(name: "OfflineSyncConformance", targets: ["OfflineSyncConformance"]),
        .library(name: "OfflineSyncHTTP", targets: ["OfflineSyncHTTP"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.8.0"),
    ],
    targets: [
        .target(name: "OfflineSync"),
        .target(name: "OfflineSyncConformance", dependencies: ["OfflineSync"]),
        .target(name: "OfflineSyncHTTP", dependencies: [
            "OfflineSync",
            .product(name: "AsyncHTTPClient", package: "async-http-client"),
            .product(name: "NIOCore", package: "swift-nio"),
            .product(name: "NIOHTTP1", package: "swift-nio"),
            .product(name: "Logging", package: "swift-log"),
        ]),
        .testTarget(name: "OfflineSyncHTTPTests", dependencies: [
            "OfflineSyncHTTP", "OfflineSync",
            .product(name: "Hummingbird", package: "hummingbird"),
            .product(name: "HTTPTypes", package: "swift-http-types"),
            .product(name: "NIOCore", package: "swift-nio"),
        ], exclude: ["Fixtures"]),
        .testTarget(name: "OfflineSyncTests", dependencies: ["OfflineSync", "OfflineSyncConformance"]),
        .testTarget(name: "OfflineSyncConformanceTests", dependencies: ["OfflineSync", "OfflineSyncConformance"]),
    ]
)
