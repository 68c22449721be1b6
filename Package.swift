// swift-tools-version: 6.1
import PackageDescription

// The upcoming features the server ecosystem turns on (as in Hummingbird), for every target.
let swiftSettings: [SwiftSetting] = [
    // https://github.com/swiftlang/swift-evolution/blob/main/proposals/0335-existential-any.md
    .enableUpcomingFeature("ExistentialAny"),
    // https://github.com/swiftlang/swift-evolution/blob/main/proposals/0444-member-import-visibility.md
    .enableUpcomingFeature("MemberImportVisibility"),
    // https://github.com/swiftlang/swift-evolution/blob/main/proposals/0409-access-level-on-imports.md
    .enableUpcomingFeature("InternalImportsByDefault"),
]

let package = Package(
    name: "OfflineSync",
    // The oldest systems with Synchronization's Atomic and Mutex, which the core uses; Linux has
    // no minimum here (Swift 6.1 or later).
    platforms: [.macOS(.v15), .iOS(.v18), .tvOS(.v18), .watchOS(.v11), .visionOS(.v2)],
    products: [
        .library(name: "OfflineSync", targets: ["OfflineSync"]),
        .library(name: "OfflineSyncService", targets: ["OfflineSyncService"]),
        .library(name: "OfflineSyncConformance", targets: ["OfflineSyncConformance"]),
        .library(name: "OfflineSyncHTTP", targets: ["OfflineSyncHTTP"]),
        .library(name: "OfflineSyncServer", targets: ["OfflineSyncServer"]),
        .library(name: "OfflineSyncSQLite", targets: ["OfflineSyncSQLite"]),
        .library(name: "OfflineSyncSQLCipher", targets: ["OfflineSyncSQLCipher"]),
        .library(name: "OfflineSyncLMDB", targets: ["OfflineSyncLMDB"]),
        .library(name: "OfflineSyncPostgres", targets: ["OfflineSyncPostgres"]),
        .library(name: "OfflineSyncStores", targets: ["OfflineSyncStores"]),
        // Measurement code for the Benchmarks/ package; not for apps.
        .library(name: "OfflineSyncBenchmarking", targets: ["OfflineSyncBenchmarking"]),
        .executable(name: "offline-sync", targets: ["offline-sync"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.8.0"),
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.37.6"),
        .package(url: "https://github.com/apple/swift-nio-extras", from: "1.35.2"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/vapor/jwt-kit", from: "5.7.1"),
        // `swift package generate-documentation` (scripts/docs); a command plugin, built only when run.
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0"),
    ],
    targets: [
        .target(name: "OfflineSync"),
        // The server side of the table protocol over any store (TableService, row ownership,
        // stamps) and InMemoryRemote with its faults: used by servers, tests and benchmarks,
        // never by an app that only syncs.
        .target(name: "OfflineSyncService", dependencies: ["OfflineSync"]),
        .target(name: "OfflineSyncConformance", dependencies: ["OfflineSync", "OfflineSyncService"]),
        // The table protocol's rules that client and server share (JSON bodies, percent-encoding,
        // entity tags, header names, paths); no networking.
        .target(name: "OfflineSyncProtocol", dependencies: ["OfflineSync"]),
        .target(
            name: "OfflineSyncHTTP",
            dependencies: [
                "OfflineSync", "OfflineSyncProtocol",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Logging", package: "swift-log"),
            ]),
        .target(
            name: "OfflineSyncServer",
            dependencies: [
                "OfflineSync", "OfflineSyncProtocol", "OfflineSyncService",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "HummingbirdTLS", package: "hummingbird"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
                .product(name: "NIOHTTPTypesHTTP1", package: "swift-nio-extras"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]),
        // What the HTTP and server tests share: servers started in process or as `offline-sync serve`
        // processes, raw connections, devices syncing over HTTP, recorded traffic, tokens.
        .target(
            name: "OfflineSyncTestSupport",
            dependencies: [
                "OfflineSync", "OfflineSyncService", "OfflineSyncHTTP", "OfflineSyncServer", "OfflineSyncSQLite",
                "OfflineSyncSQLCipher", "OfflineSyncLMDB", "OfflineSyncPostgres",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Tests/OfflineSyncTestSupport"),
        .testTarget(
            name: "OfflineSyncHTTPTests",
            dependencies: [
                "OfflineSyncTestSupport", "OfflineSyncService", "OfflineSyncHTTP", "OfflineSyncServer", "OfflineSync",
                "OfflineSyncSQLite", "OfflineSyncSQLCipher", "OfflineSyncLMDB", "offline-sync",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "HummingbirdTLS", package: "hummingbird"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ], exclude: ["Fixtures"]),
        .testTarget(
            name: "OfflineSyncServerTests",
            dependencies: [
                "OfflineSyncTestSupport", "OfflineSyncServer", "OfflineSyncService", "OfflineSync", "OfflineSyncHTTP",
                "OfflineSyncSQLite", "OfflineSyncSQLCipher", "OfflineSyncLMDB", "offline-sync",
                .product(name: "NIOCore", package: "swift-nio"),
            ]),
        // The system SQLite (3.40 on Debian bookworm). SQLCipher is never linked: it is loaded at
        // run time by OfflineSyncSQLCipher (see docs/ARCHITECTURE.md, "Facts that constrain the backends").
        .systemLibrary(name: "CSQLite", pkgConfig: "sqlite3", providers: [.apt(["libsqlite3-dev"])]),
        .target(name: "OfflineSyncSQLite", dependencies: ["OfflineSync", "CSQLite"]),
        // Loads libsqlcipher.so.0 with dlopen(RTLD_DEEPBIND); it must never be linked (no
        // pkg-config, no linker setting), or SQLite and SQLCipher symbols collide.
        .target(name: "OfflineSyncSQLCipher", dependencies: ["OfflineSync", "OfflineSyncSQLite"]),
        .target(
            name: "OfflineSyncStores",
            // The device backends only: an app that names its store in configuration links no libpq.
            dependencies: ["OfflineSync", "OfflineSyncSQLite", "OfflineSyncSQLCipher", "OfflineSyncLMDB"]),
        // The measurement code: benchmark scenarios, the raw C baselines each is measured against
        // (through the backends' `package` API), the runner, the report and the HTTP load tools.
        // `offline-sync bench` / `bench-serve` and the Benchmarks/ package run it; no app needs it
        // (see docs/ARCHITECTURE.md, "Measurement code").
        .target(
            name: "OfflineSyncBenchmarking",
            dependencies: [
                "OfflineSync", "OfflineSyncService", "OfflineSyncSQLite", "OfflineSyncSQLCipher", "OfflineSyncLMDB",
                "OfflineSyncPostgres", "OfflineSyncServer", "OfflineSyncHTTP", "CSQLite", "CLMDB",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ]),
        // The device of the client crash suite (scripts/crash-test, CrashSuiteTests): a test
        // executable, not part of the shipped tool.
        .executableTarget(
            name: "offline-sync-crash-client",
            dependencies: [
                "OfflineSync", "OfflineSyncHTTP", "OfflineSyncStores",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]),
        .executableTarget(
            name: "offline-sync",
            dependencies: [
                "OfflineSyncService", "OfflineSyncBenchmarking",
                "OfflineSync", "OfflineSyncStores", "OfflineSyncConformance", "OfflineSyncSQLCipher",
                "OfflineSyncServer", "OfflineSyncHTTP", "OfflineSyncSQLite", "OfflineSyncLMDB", "CLMDB",
                "OfflineSyncPostgres",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .testTarget(name: "OfflineSyncTests", dependencies: ["OfflineSyncService", "OfflineSync", "OfflineSyncConformance"]),
        .testTarget(name: "OfflineSyncServiceTests", dependencies: ["OfflineSyncService", "OfflineSync"]),
        .testTarget(name: "OfflineSyncProtocolTests", dependencies: ["OfflineSync", "OfflineSyncProtocol"]),
        .testTarget(
            name: "OfflineSyncSQLiteTests",
            dependencies: [
                "OfflineSyncService", "OfflineSync", "OfflineSyncConformance", "OfflineSyncSQLite", "OfflineSyncSQLCipher", "CSQLite",
            ]),
        .systemLibrary(name: "CLMDB", pkgConfig: "lmdb", providers: [.apt(["liblmdb-dev"])]),
        .target(name: "OfflineSyncLMDB", dependencies: ["OfflineSync", "CLMDB"]),
        .testTarget(
            name: "OfflineSyncLMDBTests",
            dependencies: ["OfflineSyncService", "OfflineSync", "OfflineSyncLMDB", "OfflineSyncConformance", "CLMDB"]),
        // libpq, PostgreSQL's C client library (Debian libpq-dev).
        .systemLibrary(name: "CLibPQ", pkgConfig: "libpq", providers: [.apt(["libpq-dev"])]),
        .target(name: "OfflineSyncPostgres", dependencies: ["OfflineSync", "CLibPQ"]),
        .testTarget(
            name: "OfflineSyncPostgresTests",
            dependencies: [
                "OfflineSyncTestSupport",
                "OfflineSyncService", "OfflineSync", "OfflineSyncConformance", "OfflineSyncPostgres", "OfflineSyncHTTP", "OfflineSyncSQLite",
                "offline-sync",
            ]),
        .testTarget(
            name: "OfflineSyncConformanceTests",
            dependencies: [
                "OfflineSyncTestSupport",
                "OfflineSyncService", "OfflineSync", "OfflineSyncConformance", "OfflineSyncSQLite", "OfflineSyncSQLCipher", "OfflineSyncLMDB",
            ]),
        .testTarget(
            name: "OfflineSyncConfigurationTests",
            dependencies: [
                "OfflineSync", "OfflineSyncStores", "OfflineSyncSQLite", "OfflineSyncSQLCipher", "OfflineSyncLMDB",
            ]),
        .testTarget(
            name: "OfflineSyncCLITests",
            dependencies: [
                "OfflineSyncTestSupport",
                "OfflineSyncService", "offline-sync", "offline-sync-crash-client", "OfflineSync", "OfflineSyncStores",
            ]),
        .testTarget(
            name: "OfflineSyncBenchmarkingTests",
            dependencies: [
                "OfflineSyncBenchmarking", "OfflineSyncService", "OfflineSync", "OfflineSyncStores", "OfflineSyncSQLite",
                "OfflineSyncLMDB", "OfflineSyncPostgres",
            ]),
        // Every Swift snippet of README.md and of the DocC articles, compiled as printed
        // (scripts/extract-snippets writes Snippets/ from the documents).
        .testTarget(
            name: "OfflineSyncSnippetTests",
            dependencies: [
                "OfflineSync", "OfflineSyncService", "OfflineSyncConformance", "OfflineSyncHTTP", "OfflineSyncServer",
                "OfflineSyncSQLite", "OfflineSyncSQLCipher", "OfflineSyncLMDB", "OfflineSyncPostgres", "OfflineSyncStores",
            ]),
    ]
)

for target in package.targets where target.type != .system {
    target.swiftSettings = (target.swiftSettings ?? []) + swiftSettings
}
