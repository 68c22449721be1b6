extension StoreConfiguration {
    /// The value of an option whose values are a backend's choices (``StoreOption/choice(_:_:summary:)``,
    /// ``StoreOption/durability(_:)``), matched in any letter case, or `fallback` when it is absent.
    public func choice<Choice: StoreChoice>(_ name: String, default fallback: Choice) throws -> Choice {
        guard let text = option(name) else { return fallback }
        guard let value = Choice.allCases.first(where: { $0.rawValue.lowercased() == text.lowercased() }) else {
            throw OfflineSyncError(
                .configuration,
                "the \(scheme): store option '\(name)' is '\(text.prefix(40))'; it must be one of \(Choice.allCases.map(\.rawValue).joined(separator: ", "))"
            )
        }
        return value
    }

    /// The value of a size option in bytes (see ``ByteSize``), or `nil` when it is absent.
    public func size(_ name: String) throws -> Int? {
        guard let text = option(name) else { return nil }
        do {
            return try ByteSize.parse(text)
        } catch let error as OfflineSyncError {
            throw OfflineSyncError(.configuration, "the \(scheme): store option '\(name)' \(error.message)")
        }
    }
}
