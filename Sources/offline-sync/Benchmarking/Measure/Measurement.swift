#if canImport(Glibc)
    import Glibc
#endif

/// What one run of a scenario on one target cost.
struct Measurement: Sendable, Hashable, Codable {
    /// How many operations (rows, queries, opens …) the run performed.
    var operations: Int
    /// Wall-clock seconds of the measured part (set-up excluded).
    var seconds: Double
    /// Peak resident memory during the measured part, in bytes (`nil` where unavailable).
    var peakResidentBytes: Int?
    /// Resident memory when the measured part started, in bytes.
    var startResidentBytes: Int?

    /// Creates a measurement.
    init(operations: Int, seconds: Double, peakResidentBytes: Int? = nil, startResidentBytes: Int? = nil) {
        self.operations = operations
        self.seconds = seconds
        self.peakResidentBytes = peakResidentBytes
        self.startResidentBytes = startResidentBytes
    }

    /// Operations per second.
    var throughput: Double { seconds > 0 ? Double(operations) / seconds : 0 }

    /// Runs `body`, timing it with a monotonic clock and tracking peak resident memory.
    static func measure(operations: Int, _ body: () async throws -> Void) async rethrows -> Measurement {
        ProcessMemory.resetPeak()
        let startResident = ProcessMemory.residentBytes
        let start = monotonicSeconds()
        try await body()
        let seconds = monotonicSeconds() - start
        return Measurement(
            operations: operations, seconds: seconds, peakResidentBytes: ProcessMemory.peakResidentBytes,
            startResidentBytes: startResident)
    }

    private static func monotonicSeconds() -> Double {
        var spec = timespec()
        clock_gettime(CLOCK_MONOTONIC, &spec)
        return Double(spec.tv_sec) + Double(spec.tv_nsec) / 1e9
    }
}
