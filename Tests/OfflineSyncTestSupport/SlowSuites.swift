import Foundation
package import Testing

extension Tag {
    /// A suite that takes tens of seconds or more (kill -9 runs, PostgreSQL clusters, the
    /// broken-store matrix, fuzzing, long random sequences). `scripts/test --fast` skips them; CI
    /// runs everything.
    @Tag package static var slow: Self
}

extension Trait where Self == ConditionTrait {
    /// Skips a slow suite when `OFFLINE_SYNC_FAST_TESTS` is set, as `scripts/test --fast` does.
    package static var skippedInFastRuns: Self {
        .enabled(
            if: ProcessInfo.processInfo.environment["OFFLINE_SYNC_FAST_TESTS"] == nil,
            "a slow suite: OFFLINE_SYNC_FAST_TESTS is set (scripts/test --fast)")
    }
}
