#if canImport(Glibc)
    import Glibc
#endif

/// The process's resident memory, read from `/proc/self/status` (Linux).
enum ProcessMemory {
    /// The current resident set size in bytes (`VmRSS`), or `nil` where `/proc` is unavailable.
    static var residentBytes: Int? { statusField("VmRSS:") }

    /// The peak resident set size in bytes since start or the last ``resetPeak()`` (`VmHWM`).
    static var peakResidentBytes: Int? { statusField("VmHWM:") }

    /// Resets the peak to the current resident size (writes `5` to `/proc/self/clear_refs`).
    /// Returns `false` when the kernel refused, in which case the peak covers the whole process.
    @discardableResult
    static func resetPeak() -> Bool {
        let descriptor = Glibc.open("/proc/self/clear_refs", O_WRONLY)
        guard descriptor >= 0 else { return false }
        defer { Glibc.close(descriptor) }
        return Glibc.write(descriptor, "5", 1) == 1
    }

    private static func statusField(_ name: String) -> Int? {
        guard let file = fopen("/proc/self/status", "r") else { return nil }
        defer { fclose(file) }
        var line = [CChar](repeating: 0, count: 256)
        while fgets(&line, Int32(line.count), file) != nil {
            let text = String(decoding: line.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            guard text.hasPrefix(name) else { continue }
            let kilobytes = text.dropFirst(name.count).split(whereSeparator: { $0 == " " || $0 == "\t" }).first.flatMap
            { Int($0) }
            return kilobytes.map { $0 * 1024 }
        }
        return nil
    }
}
