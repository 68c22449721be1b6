import OfflineSync
import OfflineSyncStores
import Synchronization
import Testing

/// A third-party backend as an app would write one: in-memory stores shared by name, so opening
/// `shared-memory:inbox` twice in one process reaches the same data.
final class SharedMemoryStores: Sendable {
    private let stores = Locked<[String: InMemoryStore]>([:])

    static let scheme = StoreScheme(
        "shared-memory", summary: "in-memory stores shared by name within a process", path: .required,
        options: [StoreOption("capacity", summary: "the most items a table may hold")],
        example: "shared-memory:inbox",
        validate: { configuration in
            if let capacity = configuration.option("capacity"), Int(capacity) == nil {
                throw OfflineSyncError(.configuration, "capacity must be a whole number")
            }
        })

    func store(_ configuration: StoreConfiguration) throws -> InMemoryStore {
        let name = try configuration.requirePath()
        return stores.withLock { stores in
            if let existing = stores[name] { return existing }
            let store = InMemoryStore()
            stores[name] = store
            return store
        }
    }
}

/// A third-party scheme declaring an enumerated option, a size and its durability choices, as a
/// backend module outside this package would.
enum RocksLikeScheme {
    enum Compression: String, StoreChoice {
        case none, lz4
        var summary: String { self == .none ? "pages as they are" : "pages compressed with LZ4" }
    }

    enum Durability: String, StoreChoice {
        case strict, relaxed
        var summary: String { self == .strict ? "the WAL is synced on commit" : "the WAL is not synced" }
    }

    static let scheme = StoreScheme(
        "rocks", summary: "a RocksDB-like directory", path: .required,
        options: [
            .choice("compression", Compression.self, summary: "how pages are stored"),
            .size("block-size", summary: "the block size, e.g. 64KiB"),
            .durability(Durability.self),
        ],
        example: "rocks:./data/store.rocks?compression=lz4")
}

@Suite("Store registry")
struct StoreRegistryTests {
    static let todo = StoreSchema([
        TableSchema("todoitem", columns: [Column("text", .string), Column("complete", .bool)])
    ])

    @Test func customSchemeWorksEndToEnd() throws {
        let backend = SharedMemoryStores()
        StoreRegistry.shared.register(SharedMemoryStores.scheme) { try backend.store($0) }

        let configuration = try StoreConfiguration(parsing: "shared-memory:inbox?capacity=10")
        #expect(configuration.path == "inbox")
        let writer = try StoreRegistry.shared.makeStore(configuration)
        try writer.open(schema: StoreRegistryTests.todo)
        try writer.upsert([Item(id: "a", values: ["text": "Buy milk", "complete": false])], into: "todoitem")
        try writer.close()

        let reader = try StoreRegistry.shared.makeStore("shared-memory:inbox")
        try reader.open(schema: StoreRegistryTests.todo)
        defer { try? reader.close() }
        #expect(try reader.lookup(table: "todoitem", id: "a")?["text"] == "Buy milk")
        #expect(StoreRegistry.shared.isAvailable("shared-memory"))
    }

    @Test func customSchemeChecksItsOwnOptions() {
        let registry = StoreRegistry()
        registry.register(SharedMemoryStores.scheme) { _ in InMemoryStore() }
        let unknown = #expect(throws: OfflineSyncError.self) {
            try registry.configuration(parsing: "shared-memory:x?size=3")
        }
        #expect(unknown?.message.contains("valid options: capacity") == true)
        let invalid = #expect(throws: OfflineSyncError.self) {
            try registry.configuration(parsing: "shared-memory:x?capacity=many")
        }
        #expect(invalid?.message.contains("whole number") == true)
    }

    @Test func unknownSchemeListsRegisteredCustomSchemes() {
        let registry = StoreRegistry()
        registry.register(SharedMemoryStores.scheme) { _ in InMemoryStore() }
        let error = #expect(throws: OfflineSyncError.self) { try registry.configuration(parsing: "redis:x") }
        #expect(error?.message.contains("shared-memory:") == true)
    }

    @Test func aBackendSchemeIsUnknownUntilItsModuleRegistersIt() throws {
        let registry = StoreRegistry()
        let error = #expect(throws: OfflineSyncError.self) { try registry.makeStore("lmdb:/tmp/never-created.lmdb") }
        #expect(error?.code == .configuration)
        #expect(error?.message.contains("unknown store scheme 'lmdb'") == true)
        #expect(error?.message.contains("BuiltInStores.register()") == true)
        BuiltInStores.register(in: registry)
        #expect(registry.isAvailable("lmdb"))
    }

    @Test func thirdPartySchemeDeclaresItsOwnChoicesSizesAndDurability() throws {
        let registry = StoreRegistry()
        registry.register(RocksLikeScheme.scheme) { _ in InMemoryStore() }
        let configuration = try registry.configuration(
            parsing: "rocks:/data/r?compression=LZ4&block-size=64KiB&sync=relaxed")
        #expect(try configuration.choice("compression", default: RocksLikeScheme.Compression.none) == .lz4)
        #expect(try configuration.size("block-size") == 64 << 10)
        #expect(try configuration.choice("sync", default: RocksLikeScheme.Durability.strict) == .relaxed)
        #expect(RocksLikeScheme.scheme.durability?.values == ["strict", "relaxed"])
        #expect(RocksLikeScheme.scheme.durability?.summary.contains("relaxed: the WAL is not synced") == true)
    }

    @Test func thirdPartySchemeRefusesValuesOutsideItsOwnOptions() {
        let registry = StoreRegistry()
        registry.register(RocksLikeScheme.scheme) { _ in InMemoryStore() }
        let choice = #expect(throws: OfflineSyncError.self) {
            try registry.configuration(parsing: "rocks:/data/r?compression=zstd")
        }
        #expect(choice?.message.contains("the rocks: store option 'compression' is 'zstd'") == true)
        #expect(choice?.message.contains("none, lz4") == true)
        let size = #expect(throws: OfflineSyncError.self) {
            try registry.configuration(parsing: "rocks:/data/r?block-size=huge")
        }
        #expect(size?.message.contains("the rocks: store option 'block-size'") == true)
        let durability = #expect(throws: OfflineSyncError.self) {
            try registry.configuration(parsing: "rocks:/data/r?sync=full")
        }
        #expect(durability?.message.contains("strict, relaxed") == true)
    }

    @Test func memoryIsAvailableWithoutRegistration() throws {
        let store = try StoreRegistry().makeStore("memory:")
        try store.open(schema: StoreRegistryTests.todo)
        defer { try? store.close() }
        #expect(store.info.backend == "memory")
    }

    @Test func registrationReplacesAnEarlierOne() throws {
        let registry = StoreRegistry()
        let first = InMemoryStore()
        let second = InMemoryStore()
        registry.register(SharedMemoryStores.scheme) { _ in first }
        registry.register(SharedMemoryStores.scheme) { _ in second }
        #expect(try registry.makeStore("shared-memory:x") === second)
        #expect(registry.schemes.filter { $0.name == "shared-memory" }.count == 1)
    }

    @Test func concurrentRegistrationsAndLookupsAreSafe() async throws {
        let registry = StoreRegistry()
        await withTaskGroup(of: Void.self) { group in
            for number in 0..<64 {
                group.addTask {
                    registry.register(
                        StoreScheme("custom\(number)", summary: "test", path: .none, example: "custom\(number):")
                    ) { _ in InMemoryStore() }
                    _ = registry.availableSchemes
                    _ = try? registry.configuration(parsing: "custom\(number):")
                }
            }
        }
        for number in 0..<64 {
            #expect(registry.isAvailable("custom\(number)"))
        }
    }

    @Test func builtInBackendsRegisterAndTheDefaultStoreOpens() throws {
        BuiltInStores.register()
        let text = BuiltInStores.defaultStore(environment: [:])
        let configuration = try StoreConfiguration(parsing: text)
        #expect(StoreRegistry.shared.isAvailable(configuration.scheme))
    }

    @Test func builtInStoresAreTheDeviceBackendsWithoutPostgres() {
        let registry = StoreRegistry()
        BuiltInStores.register(in: registry)
        #expect(BuiltInStores.schemes.map(\.name) == ["memory", "sqlite", "sqlcipher", "lmdb"])
        #expect(!registry.isAvailable("postgres"), "OfflineSyncStores must not register (or link) PostgreSQL")
    }

    @Test func environmentOverridesTheDefaultStore() {
        #expect(BuiltInStores.defaultStore(environment: ["OFFLINE_SYNC_STORE": "lmdb:/data/env"]) == "lmdb:/data/env")
        #expect(
            BuiltInStores.defaultStore(environment: ["OFFLINE_SYNC_STORE": ""])
                == BuiltInStores.defaultStore(environment: [:]))
    }
}
