import Foundation

// libFuzzer harness: the schema file loader of `offline-sync import --schema` and `serve
// --schema` (`SchemaFile.parse`): decoding, validation, and the widening of a stored schema.
// Built by `scripts/fuzz schema SECONDS` together with the sources of the OfflineSync module and
// the CLI's SchemaFile.swift.

let fuzzStored = StoreSchema([TableSchema("todoitem", columns: [Column("text", .string)])])

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzSchema(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let contents = Data(bytes: data, count: size)
    if let schema = try? SchemaFile.parse(contents, path: "fuzz.json") {
        _ = try? fuzzStored.merged(with: schema)
        _ = try? JSONEncoder().encode(schema)
    }
    return 0
}
