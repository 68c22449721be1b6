#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Reads an SQLite write-ahead log as SQLite's recovery does and says when SQLite would drop
/// committed transactions from it: a log whose header is damaged (SQLite then ignores the whole
/// log), or one whose frames stop being valid (wrong checksum) before a later frame of the same
/// log generation that commits a transaction (SQLite then keeps only the frames before the
/// damaged one).
///
/// A process killed while writing leaves at most an unfinished transaction at the end of the
/// log: frames that are valid but commit nothing, or one torn frame after the last commit; a
/// reset log keeps frames of older generations, which carry other salts. None of these is
/// damage. The file format is SQLite's ("Write-Ahead Log File Format" in its file format
/// documentation): a 32-byte header, then frames of a 24-byte header and one page; all numbers
/// big-endian; checksums are cumulative Fletcher-like sums over 32-bit words in the byte order
/// the magic number names.
///
/// The log may be written by another process while it is read here (another connection to the
/// store appending or resetting it), which can make a healthy log look damaged for one read; a
/// log is only reported damaged when a second read finds the same bytes.
package enum WriteAheadLogCheck {
    /// What is wrong with the log at `path` when SQLite would drop committed transactions from
    /// it; `nil` when nothing is, or when it cannot be read (SQLite reports that).
    package static func damage(ofLogAt path: String) -> String? {
        guard let bytes = read(path), let damage = damage(of: bytes) else { return nil }
        // Reported only when the log did not change meanwhile (see the type).
        guard let again = read(path), again == bytes else { return nil }
        return damage
    }

    /// What is wrong with a log holding `bytes` (see ``damage(ofLogAt:)``).
    package static func damage(of bytes: [UInt8]) -> String? {
        if bytes.isEmpty { return nil }
        guard bytes.count >= 32 else {
            return "it holds \(bytes.count) bytes, fewer than a log header (32)"
        }
        let magic = word(bytes, 0)
        guard magic == 0x377f_0682 || magic == 0x377f_0683 else {
            return "its header does not start with SQLite's log magic number"
        }
        let bigEndian = magic & 1 == 1
        var sums = checksum(bytes[0..<24], bigEndian: bigEndian, seed: (0, 0))
        guard word(bytes, 3 * 8) == sums.0, word(bytes, 28) == sums.1 else {
            return "its header fails its checksum"
        }
        let pageSize = Int(word(bytes, 8))
        guard pageSize >= 512, pageSize <= 65536, pageSize & (pageSize - 1) == 0 else {
            return "its header names a page size of \(pageSize) bytes"
        }
        let salts = (word(bytes, 16), word(bytes, 20))
        let frameSize = 24 + pageSize
        var offset = 32
        var frame = 1
        // Valid frames first, as SQLite's recovery reads them.
        while offset + frameSize <= bytes.count {
            guard word(bytes, offset + 8) == salts.0, word(bytes, offset + 12) == salts.1 else { break }
            sums = checksum(bytes[offset..<(offset + 8)], bigEndian: bigEndian, seed: sums)
            sums = checksum(bytes[(offset + 24)..<(offset + frameSize)], bigEndian: bigEndian, seed: sums)
            guard word(bytes, offset + 16) == sums.0, word(bytes, offset + 20) == sums.1 else { break }
            offset += frameSize
            frame += 1
        }
        // The first invalid frame (wrong salts: a frame of an older generation, or damage; wrong
        // checksum: a torn or damaged frame): damage only if a later frame of this generation
        // commits a transaction.
        let damaged = frame
        offset += frameSize
        frame += 1
        while offset + frameSize <= bytes.count {
            if word(bytes, offset + 8) == salts.0, word(bytes, offset + 12) == salts.1, word(bytes, offset + 4) != 0 {
                return "frame \(damaged) is not valid, and frame \(frame), written after it, commits a transaction"
            }
            offset += frameSize
            frame += 1
        }
        return nil
    }

    /// The big-endian 32-bit number at `offset`.
    private static func word(_ bytes: [UInt8], _ offset: Int) -> UInt32 {
        UInt32(bytes[offset]) << 24 | UInt32(bytes[offset + 1]) << 16 | UInt32(bytes[offset + 2]) << 8
            | UInt32(bytes[offset + 3])
    }

    /// SQLite's log checksum of `bytes` (a multiple of 8 bytes) continued from `seed`.
    private static func checksum(_ bytes: ArraySlice<UInt8>, bigEndian: Bool, seed: (UInt32, UInt32))
        -> (UInt32, UInt32)
    {
        var (s0, s1) = seed
        bytes.withUnsafeBytes { raw in
            var offset = 0
            while offset + 8 <= raw.count {
                var x0 = raw.loadUnaligned(fromByteOffset: offset, as: UInt32.self)
                var x1 = raw.loadUnaligned(fromByteOffset: offset + 4, as: UInt32.self)
                if bigEndian {
                    x0 = UInt32(bigEndian: x0)
                    x1 = UInt32(bigEndian: x1)
                } else {
                    x0 = UInt32(littleEndian: x0)
                    x1 = UInt32(littleEndian: x1)
                }
                s0 = s0 &+ x0 &+ s1
                s1 = s1 &+ x1 &+ s0
                offset += 8
            }
        }
        return (s0, s1)
    }

    /// The whole file at `path`, or `nil` when it cannot be read.
    private static func read(_ path: String) -> [UInt8]? {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let count = chunk.withUnsafeMutableBytes { readBytes(descriptor, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                return nil
            }
            if count == 0 { return bytes }
            bytes.append(contentsOf: chunk[0..<count])
        }
    }
}

/// The C library's `read(2)`, which the check's own `read(_:)` hides inside its type.
private func readBytes(_ descriptor: Int32, _ buffer: UnsafeMutableRawPointer?, _ count: Int) -> Int {
    read(descriptor, buffer, count)
}
