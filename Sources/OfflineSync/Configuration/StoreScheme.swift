/// What a store scheme accepts: whether it takes a path, which options, and how their values are
/// checked. A ``StoreRegistry`` parses configurations against the schemes it knows.
///
/// A backend author describes a scheme once and registers it with its factory:
///
/// ```swift
/// StoreRegistry.shared.register(
///     StoreScheme("rocks", summary: "a RocksDB directory", path: .required,
///                 options: [.choice("compression", Compression.self), .durability(RocksDurability.self)],
///                 example: "rocks:./data/store.rocks")
/// ) { configuration in try RocksStore(path: configuration.requirePath()) }
/// ```
public struct StoreScheme: Sendable {
    /// Whether the scheme takes a path.
    public enum PathRule: Sendable, Hashable {
        /// A path is required (`rocks:PATH`).
        case required
        /// No path may be given (`memory:`).
        case none
        /// A path may be given or omitted.
        case optional
    }

    /// The scheme name, lower case, e.g. `rocks`.
    public let name: String
    /// One line saying what the store is, for help texts.
    public let summary: String
    /// Whether a path is taken.
    public let path: PathRule
    /// The options the scheme accepts.
    public let options: [StoreOption]
    /// A complete example, e.g. `rocks:./data/store.rocks?compression=lz4`.
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

    /// The option that chooses how hard a commit works to survive a crash or a power loss (see
    /// ``StoreOption/durability(_:)``), or `nil` when the scheme has none.
    public var durability: StoreOption? {
        options.first { $0.isDurability }
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
            do {
                try known.check?(option.value)
            } catch let error as OfflineSyncError {
                throw OfflineSyncError(.configuration, "the \(name): store option '\(option.name)' \(error.message)")
            }
        }
        try check(configuration)
    }
}

/// One option a ``StoreScheme`` accepts: its name, its accepted values or the check of its value,
/// and a line of help. Backends declare their own (``choice(_:_:summary:)``,
/// ``durability(_:)``, ``size(_:summary:)``, or free text checked by the scheme).
public struct StoreOption: Sendable, Hashable {
    /// The option's name, lower case, e.g. `map-size`.
    public let name: String
    /// The accepted values (lower case), or `nil` when the value is free text checked by the scheme.
    public let values: [String]?
    /// One line for help texts.
    public let summary: String
    /// `true` for the option that chooses the store's durability (``durability(_:)``).
    public let isDurability: Bool
    let check: (@Sendable (String) throws -> Void)?

    /// Describes an option.
    /// - Parameters:
    ///   - name: the option's name (kept in lower case).
    ///   - values: the accepted values, or `nil` for free text.
    ///   - summary: one line for help texts.
    ///   - validate: checks a value; throw an ``OfflineSyncError`` whose message completes "the
    ///     SCHEME: store option 'NAME' …" (e.g. "must be a whole number").
    public init(
        _ name: String, values: [String]? = nil, summary: String = "",
        validate: (@Sendable (String) throws -> Void)? = nil
    ) {
        self.init(name, values: values, summary: summary, isDurability: false, validate: validate)
    }

    private init(
        _ name: String, values: [String]?, summary: String, isDurability: Bool,
        validate: (@Sendable (String) throws -> Void)?
    ) {
        self.name = name.lowercased()
        self.values = values
        self.summary = summary
        self.isDurability = isDurability
        self.check = validate
    }

    /// An option whose value is one of `Choice`'s cases (their raw values, any letter case); the
    /// help text lists each with its summary after `summary`.
    public static func choice<Choice: StoreChoice>(_ name: String, _ choices: Choice.Type, summary: String = "")
        -> StoreOption
    {
        StoreOption(
            name, values: choices.allCases.map { $0.rawValue.lowercased() }, summary: describe(summary, choices))
    }

    /// The `sync` option: how hard a commit works to survive a crash or a power loss, one of
    /// `Choice`'s cases. Read it with ``StoreConfiguration/choice(_:default:)``.
    public static func durability<Choice: StoreChoice>(_ choices: Choice.Type) -> StoreOption {
        StoreOption(
            "sync", values: choices.allCases.map { $0.rawValue.lowercased() }, summary: describe("", choices),
            isDurability: true, validate: nil)
    }

    /// An option whose value is a size in bytes (see ``ByteSize``), e.g. `64MiB`. Read it with
    /// ``StoreConfiguration/size(_:)``.
    public static func size(_ name: String, summary: String) -> StoreOption {
        StoreOption(name, summary: summary) { _ = try ByteSize.parse($0) }
    }

    private static func describe<Choice: StoreChoice>(_ summary: String, _ choices: Choice.Type) -> String {
        let listed = choices.allCases.map { "\($0.rawValue): \($0.summary)" }.joined(separator: "; ")
        return summary.isEmpty ? listed : "\(summary) (\(listed))"
    }

    public static func == (left: StoreOption, right: StoreOption) -> Bool {
        left.name == right.name && left.values == right.values && left.summary == right.summary
            && left.isDurability == right.isDurability
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(name)
        hasher.combine(values)
        hasher.combine(summary)
        hasher.combine(isDurability)
    }
}
