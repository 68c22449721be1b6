// libFuzzer harness: the LMDB backend's record decoder (`RecordCodec`) on arbitrary bytes, as
// it reads records from a data file that may be damaged: whole records, a column subset, and
// the slot decoding of the write path; a record that decodes is encoded and decoded again and
// must give the same item. Also the index key component reader (`IndexKey`).
// Built by `scripts/fuzz lmdb-record SECONDS` together with the sources of the OfflineSync
// module and the record files of OfflineSyncLMDB.

let fuzzColumns = ["text", "flag", "count", "score", "due", "data"]
let fuzzOrdinals = RecordCodec.ColumnOrdinals(fuzzColumns)

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzRecord(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let bytes = UnsafeRawBufferPointer(start: data, count: size)
    if let item = RecordCodec.decode(bytes, id: "x", columnNames: fuzzColumns) {
        var again: [UInt8] = []
        RecordCodec.encode(item, columns: fuzzOrdinals, into: &again)
        let reread = again.withUnsafeBytes { RecordCodec.decode($0, id: "x", columnNames: fuzzColumns) }
        if reread?.values.count != item.values.count {
            fatalError("a decoded record did not survive encoding and decoding again")
        }
    }
    _ = RecordCodec.decode(bytes, id: "x", columnNames: fuzzColumns, only: [true, false, true, false, true, false])
    var values = [Value](repeating: .null, count: 3)
    _ = RecordCodec.decode(bytes, slots: [0, -1, 1, -1, 2, -1], into: &values)
    for type in [ColumnType.bool, .integer, .double, .date, .string, .json] {
        for length in [0, size / 2, size] {
            _ = IndexKey.firstComponentLength(bytes, valueLength: length, type: type)
        }
    }
    return 0
}
