// libFuzzer harness: the wire decoding of the table protocol (`WireJSON`): a page, an item and a
// plain object, as the client reads server answers and the server reads request bodies; what
// decodes is encoded again.
// Built by `scripts/fuzz wire SECONDS` together with the sources of the OfflineSync module and
// the wire JSON file.

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzWire(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let body = Array(UnsafeBufferPointer(start: data, count: size))
    if let page = try? WireJSON.decodePage(body) { _ = try? WireJSON.encodePage(page) }
    if let item = try? WireJSON.decodeItem(body) {
        _ = try? WireJSON.encode(item)
        _ = try? WireJSON.encodeForWrite(item)
    }
    if let object = try? WireJSON.decodeObject(body) { _ = try? WireJSON.encodeObject(object) }
    return 0
}
