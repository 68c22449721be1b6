/// The member names a ``JSONReader`` has seen, so that the names every item of a page repeats are
/// decoded, validated and allocated once, and found by comparing bytes.
///
/// A name is looked up first at the index the previous object had at the same position (items of
/// one page list their members in the same order), then among all names. The table holds at most
/// ``capacity`` names and starts afresh when full, so any input works, only more slowly.
struct JSONMemberNames {
    /// What a member name means in an item.
    enum Role {
        case id
        /// `createdAt` or `updatedAt`: ISO 8601 text becomes a date.
        case systemDate
        case column
    }

    static let capacity = 256

    private(set) var names: [String] = []
    private(set) var roles: [Role] = []
    private var bounds: [Range<Int>] = []
    private var storage: [UInt8] = []
    private var previousOrder: [Int] = []
    private var currentOrder: [Int] = []

    /// Starts the members of a new object.
    mutating func beginObject() {
        swap(&previousOrder, &currentOrder)
        currentOrder.removeAll(keepingCapacity: true)
    }

    /// The index in ``names`` and ``roles`` of the member name `text` (valid UTF-8), added if new.
    ///
    /// Mutating throughout (no non-mutating helper), so that the arrays are used in place and not
    /// retained for a call.
    mutating func index(of text: UnsafeBufferPointer<UInt8>) -> Int {
        let hint = currentOrder.count < previousOrder.count ? previousOrder[currentOrder.count] : nil
        let found: Int? = storage.withUnsafeBufferPointer { storage in
            if let hint, hint < bounds.count, JSONMemberNames.equal(storage, bounds[hint], text) { return hint }
            return bounds.firstIndex { JSONMemberNames.equal(storage, $0, text) }
        }
        let index = found ?? add(text)
        currentOrder.append(index)
        return index
    }

    private static func equal(
        _ storage: UnsafeBufferPointer<UInt8>, _ range: Range<Int>, _ text: UnsafeBufferPointer<UInt8>
    ) -> Bool {
        range.count == text.count
            && (text.isEmpty || memcmp(storage.baseAddress! + range.lowerBound, text.baseAddress!, text.count) == 0)
    }

    private mutating func add(_ text: UnsafeBufferPointer<UInt8>) -> Int {
        if names.count == JSONMemberNames.capacity {
            names.removeAll()
            roles.removeAll()
            bounds.removeAll()
            storage.removeAll()
            previousOrder.removeAll()
            currentOrder.removeAll()
        }
        let name = String(decoding: text, as: UTF8.self)
        switch name {
        case "id": roles.append(.id)
        case SystemProperty.createdAt.rawValue, SystemProperty.updatedAt.rawValue: roles.append(.systemDate)
        default: roles.append(.column)
        }
        names.append(name)
        bounds.append(storage.count..<storage.count + text.count)
        storage.append(contentsOf: text)
        return names.count - 1
    }
}

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif
