import OfflineSync

/// The sync tier: the shared queue, push, pull and purge logic over the store under test.
enum SyncTierGroups {
    static let all: [ConformanceGroup] = []
}
