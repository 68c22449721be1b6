/// An id compared by its UTF-8 bytes, for dictionaries and sets of ids. `String`'s own `==` uses
/// canonical equivalence, under which precomposed and decomposed "é" would be one key; ids are
/// byte-wise (see ``Item``).
///
/// It keeps the string itself (no copy of its bytes) and hashes and compares the UTF-8 bytes in
/// one pass over contiguous storage, so making a key and looking it up allocates nothing.
struct IdKey: Hashable {
    let id: String

    init(_ id: String) {
        self.id = id
    }

    static func == (lhs: IdKey, rhs: IdKey) -> Bool {
        lhs.id.utf8.count == rhs.id.utf8.count && ValueSemantics.compareBytes(lhs.id, rhs.id) == 0
    }

    func hash(into hasher: inout Hasher) {
        var id = id
        id.withUTF8 { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
    }
}
