#if canImport(Glibc)
    import Glibc
#endif

/// The process's resident memory, read from `/proc/self/status` (Linux).
enum ProcessMemory {
    /// The current resident set size in bytes (`VmRSS`), or `nil` where `/proc` is unavailable.
    static var residentBytes: Int? { statusFields(["VmRSS:"])["VmRSS:"] }

    /// The peak resident set size in bytes since start or the last ``resetPeak()`` (`VmHWM`).
    static var peakResidentBytes: Int? { statusFields(["VmHWM:"])["VmHWM:"] }

    /// The current and the peak resident set size from one reading of the status file, so that
    /// the peak is never below the current size (as two readings may show, when another thread
    /// resets the peak or frees memory between them).
    static var residentAndPeakBytes: (resident: Int, peak: Int)? {
        let fields = statusFields(["VmRSS:", "VmHWM:"])
        guard let resident = fields["VmRSS:"], let peak = fields["VmHWM:"] else { return nil }
        return (resident, peak)
    }

    /// Resets the peak to the current resident size (writes `5` to `/proc/self/clear_refs`).
    /// Returns `false` when the kernel refused, in which case the peak covers the whole process.
    @discardableResult
    static func resetPeak() -> Bool {
        let descriptor = Glibc.open("/proc/self/clear_refs", O_WRONLY)
        guard descriptor >= 0 else { return false }
        defer { Glibc.close(descriptor) }
        return Glibc.write(descriptor, "5", 1) == 1
    }

    /// The fields `names` of `/proc/self/status` in bytes, read in one pass of the file (which the
    /// kernel writes whole at the first read).
    private static func statusFields(_ names: [String]) -> [String: Int] {
        guard let file = fopen("/proc/self/status", "r") else { return [:] }
        defer { fclose(file) }
        var fields: [String: Int] = [:]
        var line = [CChar](repeating: 0, count: 256)
        while fields.count < names.count, fgets(&line, Int32(line.count), file) != nil {
            let text = String(decoding: line.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            guard let name = names.first(where: { text.hasPrefix($0) }) else { continue }
            let kilobytes = text.dropFirst(name.count).split(whereSeparator: { $0 == " " || $0 == "\t" }).first.flatMap
            { Int($0) }
            fields[name] = kilobytes.map { $0 * 1024 }
        }
        return fields
    }
}
