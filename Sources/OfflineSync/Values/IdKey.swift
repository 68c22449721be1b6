/// An id compared by its UTF-8 bytes, for dictionaries and sets of ids. `String`'s own `==` uses
/// canonical equivalence, under which precomposed and decomposed "é" would be one key; ids are
/// byte-wise (see ``Item``).
struct IdKey: Hashable {
    let bytes: [UInt8]

    init(_ id: String) {
        bytes = Array(id.utf8)
    }
}
