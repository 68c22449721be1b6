/// What a store scheme accepts: whether it takes a path, which options, and how their values are
/// checked. A ``StoreRegistry`` parses configurations against the schemes it knows.
///
/// A backend author describes a scheme once and registers it with its factory:
///
/// ```swift
/// StoreRegistry.shared.register(
///     StoreScheme("rocks", summary: "a RocksDB directory", path: .required,
///                 options: [StoreOption("compression", values: ["none", "lz4"])],
///                 example: "rocks:./data/store.rocks")
/// ) { configuration in try RocksStore(path: configuration.requirePath()) }
/// ```
public struct StoreScheme: Sendable {
    /// Whether the scheme takes a path.
    public enum PathRule: Sendable, Hashable {
        /// A path is required (`sqlite:PATH`).
        case required
        /// No path may be given (`memory:`).
        case none
        /// A path may be given or omitted.
        case optional
    }

    /// The scheme name, lower case, e.g. `sqlite`.
    public let name: String
    /// One line saying what the store is, for help texts.
    public let summary: String
    /// Whether a path is taken.
    public let path: PathRule
    /// The options the scheme accepts.
    public let options: [StoreOption]
    /// A complete example, e.g. `sqlite:./data/store.sqlite?sync=normal`.
    public let example: String
    let check: @Sendable (StoreConfiguration) throws -> Void

    /// Describes a scheme.
    /// - Parameters:
    ///   - name: the scheme (letters, digits, `-`, `+`, `.`); matched case-insensitively.
    ///   - summary: one line for help texts.
    ///   - path: whether a path is taken.
    ///   - options: the accepted options; any other option is refused with the list of these.
    ///   - example: a complete example.
    ///   - validate: checks that need more than the option lists (sizes, combinations); throw an
    ///     ``OfflineSyncError`` with code ``OfflineSyncError/Code-swift.struct/configuration``.
    public init(
        _ name: String, summary: String, path: PathRule, options: [StoreOption] = [],
        example: String, validate: @escaping @Sendable (StoreConfiguration) throws -> Void = { _ in }
    ) {
        self.name = name.lowercased()
        self.summary = summary
        self.path = path
        self.options = options
        self.example = example
        self.check = validate
    }

    /// Checks a split configuration against this scheme: path rule, option names, enumerated values,
    /// then the scheme's own validation.
    func validate(_ configuration: StoreConfiguration) throws {
        switch path {
        case .required:
            _ = try configuration.requirePath()
        case .none:
            if let given = configuration.path, !given.isEmpty {
                throw OfflineSyncError(
                    .configuration,
                    "the \(name): store takes no path, but '\(given.prefix(200))' was given; write \(example)")
            }
        case .optional:
            break
        }
        for option in configuration.options {
            guard let known = options.first(where: { $0.name == option.name }) else {
                let valid =
                    options.isEmpty
                    ? "it takes no options" : "valid options: " + options.map(\.name).joined(separator: ", ")
                throw OfflineSyncError(.configuration, "the \(name): store has no option '\(option.name)'; \(valid)")
            }
            if let values = known.values, !values.contains(option.value.lowercased()) {
                throw OfflineSyncError(
                    .configuration,
                    "the \(name): store option '\(option.name)' is '\(option.value.prefix(40))'; it must be one of \(values.joined(separator: ", "))"
                )
            }
        }
        try check(configuration)
    }
}

/// One option a ``StoreScheme`` accepts.
public struct StoreOption: Sendable, Hashable {
    /// The option's name, lower case, e.g. `map-size`.
    public let name: String
    /// The accepted values (lower case), or `nil` when the value is free text checked by the scheme.
    public let values: [String]?
    /// One line for help texts.
    public let summary: String

    /// Describes an option.
    public init(_ name: String, values: [String]? = nil, summary: String = "") {
        self.name = name.lowercased()
        self.values = values
        self.summary = summary
    }
}
