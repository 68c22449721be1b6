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
    /// CPU seconds the whole process used during the measured part (every thread, user and
    /// system), `nil` where unavailable.
    var cpuSeconds: Double?

    /// Creates a measurement.
    init(
        operations: Int, seconds: Double, peakResidentBytes: Int? = nil, startResidentBytes: Int? = nil,
        cpuSeconds: Double? = nil
    ) {
        self.operations = operations
        self.seconds = seconds
        self.peakResidentBytes = peakResidentBytes
        self.startResidentBytes = startResidentBytes
        self.cpuSeconds = cpuSeconds
    }

    /// Operations per second.
    var throughput: Double { seconds > 0 ? Double(operations) / seconds : 0 }

    /// CPU seconds per operation; `nil` without a CPU time or without operations.
    var cpuSecondsPerOperation: Double? {
        guard let cpuSeconds, operations > 0 else { return nil }
        return cpuSeconds / Double(operations)
    }

    /// This run and `other` as one: operations, wall clock and CPU time added up (the CPU time
    /// is `nil` when either lacks it), the resident memory of the run that grew it most.
    func adding(_ other: Measurement) -> Measurement {
        func growth(_ run: Measurement) -> Int { (run.peakResidentBytes ?? 0) - (run.startResidentBytes ?? 0) }
        let memory = growth(other) > growth(self) ? other : self
        return Measurement(
            operations: operations + other.operations, seconds: seconds + other.seconds,
            peakResidentBytes: memory.peakResidentBytes, startResidentBytes: memory.startResidentBytes,
            cpuSeconds: cpuSeconds.flatMap { mine in other.cpuSeconds.map { mine + $0 } })
    }

    /// Runs `body`, timing it with a monotonic clock and tracking peak resident memory.
    static func measure(operations: Int, _ body: () async throws -> Void) async rethrows -> Measurement {
        ProcessMemory.resetPeak()
        let startResident = ProcessMemory.residentBytes
        let startCPU = clockSeconds(of: CLOCK_PROCESS_CPUTIME_ID)
        let start = clockSeconds(of: CLOCK_MONOTONIC)
        try await body()
        let seconds = clockSeconds(of: CLOCK_MONOTONIC) - start
        let cpu = clockSeconds(of: CLOCK_PROCESS_CPUTIME_ID) - startCPU
        return Measurement(
            operations: operations, seconds: seconds, peakResidentBytes: ProcessMemory.peakResidentBytes,
            startResidentBytes: startResident, cpuSeconds: cpu)
    }

    /// Runs `body` (`operationsPerRun` operations each time) again and again until the runs add
    /// up to `minimumSeconds` of wall clock (at least once, at most 100,000 times), and measures
    /// them together.
    static func measure(
        operationsPerRun: Int, minimumSeconds: Double, _ body: () async throws -> Void
    ) async rethrows -> Measurement {
        var runs = 0
        var measurement = try await measure(operations: 0) {
            let start = clockSeconds(of: CLOCK_MONOTONIC)
            repeat {
                try await body()
                runs += 1
            } while clockSeconds(of: CLOCK_MONOTONIC) - start < minimumSeconds && runs < 100_000
        }
        measurement.operations = operationsPerRun * runs
        return measurement
    }

    private static func clockSeconds(of clock: clockid_t) -> Double {
        var spec = timespec()
        clock_gettime(clock, &spec)
        return Double(spec.tv_sec) + Double(spec.tv_nsec) / 1e9
    }
}
