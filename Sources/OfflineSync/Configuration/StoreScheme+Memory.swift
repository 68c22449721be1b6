extension StoreScheme {
    /// `memory:` — an ``InMemoryStore``; nothing survives the process.
    public static let memory = StoreScheme(
        "memory", summary: "an in-memory store (the reference semantics; nothing is persisted)",
        path: .none, example: "memory:")
}
