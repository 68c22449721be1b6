import Synchronization

/// Maps store schemes to factories, so the backend is chosen by a configuration string.
///
/// Like swift-log's `LoggingSystem`, there is one process-wide registry, ``shared``; unlike it,
/// registering is not a one-shot bootstrap: each backend registers its own scheme, and a later
/// registration of the same scheme replaces the earlier one. The registry is safe to use from any
/// thread (a lock guards it).
///
/// A registry starts out knowing only `memory:` (the core's ``InMemoryStore``). Every other scheme
/// is declared by its backend module — a ``StoreScheme`` with its options, their checks and help
/// texts, and a factory — and registered with one call to ``register(_:factory:)``; the backends
/// that ship with OfflineSync do exactly that (`BuiltInStores.register()` in `OfflineSyncStores`
/// registers them all), as a third-party backend does. A scheme nobody registered is unknown.
///
/// ```swift
/// let store = try StoreRegistry.shared.makeStore("rocks:./data/store.rocks")
/// try store.open(schema: schema)
/// ```
public final class StoreRegistry: Sendable {
    /// Builds a new, unopened store for a configuration that the scheme's ``StoreScheme`` accepted.
    public typealias Factory = @Sendable (StoreConfiguration) throws -> any LocalStore

    private struct Entry {
        var scheme: StoreScheme
        var factory: Factory
    }

    private let entries: Locked<[Entry]>

    /// The process-wide registry; it knows `memory:` until backends register their schemes.
    public static let shared = StoreRegistry()

    /// Creates a registry that knows only `memory:`.
    public init() {
        entries = Locked([Entry(scheme: .memory, factory: { _ in InMemoryStore() })])
    }

    /// Registers (or replaces) a scheme with the factory that opens it. One call is all a
    /// third-party backend needs.
    public func register(_ scheme: StoreScheme, factory: @escaping Factory) {
        entries.withLock { entries in
            let entry = Entry(scheme: scheme, factory: factory)
            if let position = entries.firstIndex(where: { $0.scheme.name == scheme.name }) {
                entries[position] = entry
            } else {
                entries.append(entry)
            }
        }
    }

    /// Every known scheme, in registration order (`memory` first).
    public var schemes: [StoreScheme] {
        entries.withLock { $0.map(\.scheme) }
    }

    /// `true` when `scheme` is registered, i.e. stores of it can be opened in this process.
    public func isAvailable(_ scheme: String) -> Bool {
        entries.withLock { entries in
            entries.contains { $0.scheme.name == scheme.lowercased() }
        }
    }

    /// The names of the schemes that can be opened in this process.
    public var availableSchemes: [String] {
        entries.withLock { $0.map(\.scheme.name) }
    }

    /// Parses and checks a configuration string.
    ///
    /// Throws ``OfflineSyncError/Code-swift.struct/configuration`` for: an empty string, a
    /// missing or unknown scheme (the message lists the known ones), a path given to a scheme that
    /// takes none or missing where one is needed, an unknown option (the message lists the valid
    /// ones), a value outside an option's list, a repeated option, a key given inline, and any
    /// check of the scheme itself (sizes, missing key source …). Messages never quote key material.
    public func configuration(parsing text: String) throws -> StoreConfiguration {
        let (schemeName, path, options) = try StoreConfiguration.split(text, examples: schemes.map(\.example))
        let scheme = try self.scheme(named: schemeName)
        let configuration = StoreConfiguration(
            scheme: schemeName, path: scheme.path == .none && path.isEmpty ? nil : path,
            options: options)
        try scheme.validate(configuration)
        return configuration
    }

    /// A new, unopened store for a configuration. Throws when the scheme is not registered in this
    /// process (the message lists the registered ones), or when the factory fails.
    public func makeStore(_ configuration: StoreConfiguration) throws -> any LocalStore {
        let (scheme, factory) = try available(configuration.scheme)
        try scheme.validate(configuration)
        return try factory(configuration)
    }

    /// Throws unless stores of `scheme` can be opened in this process: the message lists the
    /// registered schemes and says how a backend registers its own.
    public func requireAvailable(_ scheme: String) throws {
        _ = try available(scheme)
    }

    private func available(_ name: String) throws -> (StoreScheme, Factory) {
        let entry = entries.withLock { entries in entries.first { $0.scheme.name == name.lowercased() } }
        guard let entry else { throw unknownScheme(name) }
        return (entry.scheme, entry.factory)
    }

    /// Parses `text` and makes an unopened store for it.
    public func makeStore(_ text: String) throws -> any LocalStore {
        try makeStore(configuration(parsing: text))
    }

    /// The scheme with this name, or an error listing the known ones.
    public func scheme(named name: String) throws -> StoreScheme {
        let found = entries.withLock { entries in entries.first { $0.scheme.name == name.lowercased() }?.scheme }
        guard let found else { throw unknownScheme(name) }
        return found
    }

    private func unknownScheme(_ name: String) -> OfflineSyncError {
        OfflineSyncError(
            .configuration,
            "unknown store scheme '\(name.prefix(40))'; known schemes: \(schemes.map { $0.name + ":" }.joined(separator: ", ")) (a backend's scheme is known once its module registers it: import OfflineSyncStores and call BuiltInStores.register() for the built-in ones)"
        )
    }
}
