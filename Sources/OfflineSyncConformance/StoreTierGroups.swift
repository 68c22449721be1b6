import OfflineSync

/// The store tier: the `LocalStore` contract alone, one group per concern (see the
/// `StoreTier+<Group>.swift` files).
enum StoreTierGroups {
    static let all: [ConformanceGroup] = [
        schema, crud, missing, query, paging, selection, deleteByQuery, transactions, validation,
    ]
}
