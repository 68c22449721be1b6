import OfflineSync

/// The store tier: the `LocalStore` contract alone, one group per concern (see the
/// `StoreTier+<Group>.swift` files).
enum StoreTierGroups {
    static let all: [ConformanceGroup] = [
        schema, crud, values, missing, query, paging, limits, selection, deleteByQuery, transactions,
        transactionScope, concurrency, validation, sharing,
    ]
}
