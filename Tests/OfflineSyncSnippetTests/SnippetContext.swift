import Foundation
import OfflineSync
import OfflineSyncConformance
import OfflineSyncService

// The declarations the documents' snippets use without declaring them: a snippet reads as part of
// an app, and these stand for the app's own parts (its store, its remote, its sign-in session). Each
// is named here once; a snippet that needs anything else must declare it.

/// The namespace of the compiled snippets (scripts/extract-snippets writes one function per
/// document into Snippets/).
enum Snippets {}

/// The app's todo table, as a schema.
let todo = TableSchema("todo", columns: [Column("text", .string), Column("complete", .bool)])

/// The app's store schema.
let schema = StoreSchema([todo])

/// The app's local store (any ``LocalStore``; a file store in a real app).
let store: any LocalStore = InMemoryStore()

/// The app's remote (an `HTTPRemote` in a real app). `try!`: an in-process remote of a valid
/// table cannot fail to start (and the snippets are compiled, never run).
let remote: any RemoteService = try! InMemoryRemote(tables: [todo])

/// A page of rows the app received.
let page: [Item] = []

/// A table service over the app's store, as a server builds one.
var service: TableService {
    get throws { try TableService(store: store) }
}

/// An SQLCipher key held by the app.
let keyBytes = [UInt8](repeating: 7, count: 32)

/// A server's token secret.
let secret = "a secret of the server"

/// The app's sign-in session, as an identity provider's SDK hands it out: it keeps the current
/// token and renews it (renewing returns nothing; read the token again afterwards).
actor SignInSession {
    /// The current access token.
    private(set) var accessToken = "token"
    /// The current access token (the name some SDKs use).
    var token: String { accessToken }

    /// Signs in again for a new token.
    func renew() async throws {
        accessToken = "renewed"
    }
}

/// The app's sign-in session.
let session = SignInSession()

/// Shows a result in the app's UI.
func render<Value>(_ value: Value) {}

/// Drops the app's cached rows of these ids.
func invalidateCache(for ids: Set<String>) {}

/// Drops every cached row of the app.
func invalidateCache() {}

/// A path for a new store file.
func makeTemporaryPath() -> String {
    NSTemporaryDirectory() + "offline-sync-snippet-\(UUID().uuidString)"
}

/// A store that forwards every call to an in-memory store: what the articles' third-party stores
/// (``MyStore``, ``RocksStore``) stand for here.
protocol ForwardingStore: LocalStore {
    var base: InMemoryStore { get }
}

extension ForwardingStore {
    var info: StoreInfo { base.info }
    var reservedNamePrefixes: [String] { base.reservedNamePrefixes }
    var schema: StoreSchema { get throws { try base.schema } }
    func open(schema: StoreSchema) throws { try base.open(schema: schema) }
    func read(_ query: Query) throws -> QueryResult { try base.read(query) }
    func lookup(table: String, id: String) throws -> Item? { try base.lookup(table: table, id: id) }
    func write<Result>(_ body: (any StoreTransaction) throws -> Result) throws -> Result { try base.write(body) }
    func close() throws { try base.close() }
    var isConfinedToInstance: Bool { base.isConfinedToInstance }
    func storedSchemaChanged() throws -> Bool { try base.storedSchemaChanged() }
}

/// A third party's store, as the conformance suite's article names it.
final class MyStore: ForwardingStore {
    let path: String
    let base = InMemoryStore()

    init(path: String) throws {
        self.path = path
    }
}

/// The RocksDB backend of the article on choosing a store.
final class RocksStore: ForwardingStore {
    let base = InMemoryStore()

    init<Durability: StoreChoice>(path: String, durability: Durability) throws {}
}

/// How the RocksDB backend of the article on choosing a store compresses its pages.
enum Compression: String, StoreChoice {
    case none, lz4

    var summary: String { self == .none ? "pages stored as they are" : "pages compressed with LZ4" }
}

/// The conformance suite over ``MyStore``, which the article's test methods run.
let suite = ConformanceSuite(storeName: "mystore") { try MyStore(path: makeTemporaryPath()) }

/// The app's sync context over ``store`` and ``remote``, with the ``todo`` table. `try!`: opening
/// the in-memory store with a valid table cannot fail (and the snippets are compiled, never run).
let context = try! SyncContext(store: store, remote: remote, tables: [todo])
