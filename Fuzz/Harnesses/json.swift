// libFuzzer harness: the core's single-pass JSON reader (`JSONCodec`), on values, items, item
// arrays and query results, and the writer on whatever the reader accepted.
// Built by `scripts/fuzz json SECONDS` together with the sources of the OfflineSync module.

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzJSON(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let bytes = UnsafeBufferPointer(start: data, count: size)
    if let value = try? JSONCodec.decodeValue(bytes) { _ = try? JSONCodec.encode(value) }
    if let item = try? JSONCodec.decodeItem(bytes) { _ = try? JSONCodec.encode(item) }
    if let items = try? JSONCodec.decodeItems(bytes) { _ = try? JSONCodec.encode(items) }
    if let result = try? JSONCodec.decodeResult(bytes) { _ = try? JSONCodec.encode(result) }
    return 0
}
