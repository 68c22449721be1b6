import OfflineSync
import OfflineSyncService

/// The sync tier: the shared queue, push, pull and purge logic over the store under test, with an
/// ``OfflineSync/InMemoryRemote``. Every case checks the queue and delta-token invariants at its
/// end (see `SyncFixture.checkInvariants`).
enum SyncTierGroups {
    static let all: [ConformanceGroup] = [
        SyncTierQueue.group,
        SyncTierPush.push,
        SyncTierPush.failures,
        SyncTierPush.resolution,
        SyncTierPush.policies,
        SyncTierPull.pull,
        SyncTierPurge.purge,
        SyncTierObservation.observation,
        SyncTierTutorial.tutorial,
        SyncTierTypedModels.group,
    ]
}
