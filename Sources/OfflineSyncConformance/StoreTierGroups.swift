import OfflineSync

/// The store tier: the `LocalStore` contract alone.
enum StoreTierGroups {
    static let all: [ConformanceGroup] = []
}
