import Benchmark
import Foundation
import OfflineSync
import OfflineSyncBenchmarking

/// GRDB doing the storage work of the bulk-upsert, query and lookup scenarios.
enum GRDBScenarios {
    static func register(size: BenchmarkSize, workDirectory: String) {
        let records = BenchmarkData.records(count: size.records)

        Benchmark("bulk-upsert/grdb") { benchmark in
            try withDatabase(workDirectory, indexed: false) { grdb in
                benchmark.startMeasurement()
                try grdb.insert(records, rowsPerTransaction: 1_000)
                benchmark.stopMeasurement()
            }
        }
        for indexed in [false, true] {
            Benchmark(indexed ? "query-indexed/grdb" : "query-scan/grdb") { benchmark in
                try withDatabase(workDirectory, indexed: indexed) { grdb in
                    try grdb.insert(records, rowsPerTransaction: 10_000)
                    benchmark.startMeasurement()
                    for _ in 0..<size.queries {
                        blackHole(try grdb.queryTop())
                    }
                    benchmark.stopMeasurement()
                }
            }
        }
        Benchmark("lookup/grdb") { benchmark in
            try withDatabase(workDirectory, indexed: false) { grdb in
                try grdb.insert(records, rowsPerTransaction: 10_000)
                let ids = BenchmarkScenario.randomIds(size)
                benchmark.startMeasurement()
                for id in ids {
                    blackHole(try grdb.lookup(id: id))
                }
                benchmark.stopMeasurement()
            }
        }
    }

    private static func withDatabase(_ workDirectory: String, indexed: Bool, _ body: (GRDBBaseline) throws -> Void)
        throws
    {
        let location = try StoreLocation.makeTemporary(under: workDirectory, durability: .normal, usesPassphrase: false)
        defer { location.removeDirectory() }
        try body(try GRDBBaseline(path: location.directory + "/grdb.sqlite", indexed: indexed))
    }
}
