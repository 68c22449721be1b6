import Foundation
import OfflineSync
import OfflineSyncConformance
import OfflineSyncSQLite
import Testing

/// The mutation check grown the way a backend author meets the suite: broken stores written after
/// the suite, each with a bug the cases were not written against (``UnforeseenBrokenStore``).
extension BrokenStoreTests {
    /// Each unforeseen broken store fails the cases named for it (the coverage matrix's
    /// "Unforeseen broken stores" table says which of them the suite had before).
    @Test(arguments: UnforeseenBrokenStore.Fault.allCases)
    func theSuiteCatchesTheUnforeseenBrokenStore(_ fault: UnforeseenBrokenStore.Fault) async {
        for (group, cases) in Self.unforeseenCatchers(of: fault) {
            let result = await Self.unforeseenSuite(fault).run(group: group, cases: cases)
            for name in cases {
                let outcome = result.cases.first { $0.name == name }?.outcome
                guard case .failed(let messages)? = outcome, !messages.isEmpty else {
                    Issue.record(
                        "case '\(name)' of \(group) should fail for \(fault), got \(String(describing: outcome))")
                    continue
                }
            }
        }
    }

    /// The groups, and in each the cases, that must fail a store with `fault`.
    static func unforeseenCatchers(of fault: UnforeseenBrokenStore.Fault) -> [(group: String, cases: [String])] {
        switch fault {
        case .indexedEqualityComparesTheFirst64KiB, .stringFunctionsCutArgumentsPast64KiB:
            return [("limits", [Unforeseen.longStrings])]
        case .longInListsNeverMatchNull, .longInListsTakeTheirFirstValuesType:
            return [("limits", [Unforeseen.longLists])]
        case .transactionReadsSeeOnlyTheFirst1000PendingRows, .transactionLookupsSeeOnlyTheFirst1000PendingRows:
            return [("limits", [Unforeseen.pendingRows])]
        case .selectionsReadColumnsAddedOnReopenAsNull, .orderingsIgnoreColumnsAddedOnReopen:
            return [("schema", [Unforeseen.addedColumns])]
        case .filtersReadColumnsAddedOnReopenAsNull:
            return [("schema", [Case.wideningKept, Unforeseen.addedColumns])]
        case .lookupsDropColumnsAddedOnReopen:
            return [("schema", [Case.newColumns, Case.wideningKept, Unforeseen.addedColumns])]
        case .tablesLeftOutOfAReopenRefuseWrites:
            return [("schema", [Case.emptyReopen, Unforeseen.leftOutTables]), ("validation", [Case.unknownTables])]
        case .rejectedReopensKeepTheirOtherAdditions: return [("schema", [Unforeseen.rejectedRetype])]
        case .readsFailOnAnInstanceThatMissedAWidening: return [("sharing", [Unforeseen.missedWidening])]
        case .transactionLookupsSeeRowsDeletedByQuery, .insertNewSeesRowsDeletedByQuery,
            .filteredTransactionReadsMissInsertNewRows:
            return [("transactionScope", [Unforeseen.readsAfterEachWrite])]
        case .caughtInsertNewErrorsRollBack, .caughtLookupErrorsRollBack:
            return [("transactionScope", [Unforeseen.caughtErrors])]
        case .caughtDeleteByQueryErrorsRollBack:
            return [("transactions", [Case.caughtErrorCommits]), ("transactionScope", [Unforeseen.caughtErrors])]
        case .mostNegativeIntegerDividedByMinusOneWraps, .mostNegativeIntegerModMinusOneIsNull,
            .divisionByNegativeZeroIsInfinite, .trimKeepsByteOrderMarks, .storesNumericLookingStringsAsNumbers:
            return [("query", [Unforeseen.corners])]
        case .claimsToBeConfinedToItsInstance: return [("sharing", [Unforeseen.notConfined])]
        case .storedSchemaChangedFailsDuringWrites: return [("concurrency", [Case.noDirtyReads])]
        }
    }

    /// The names of the cases written for the unforeseen broken stores.
    enum Unforeseen {
        static let longStrings =
            "strings past 64 KiB in indexed columns and in string functions agree with the reference"
        static let longLists =
            "in lists of more than a few dozen values mixing null, integers and doubles agree with the reference"
        static let pendingRows = "more than 1,000 rows written in a transaction are read back inside it"
        static let addedColumns = "columns added by a reopen are read through every method"
        static let leftOutTables = "a table left out of a reopen stays writable by every write method"
        static let rejectedRetype = "a reopen rejected for a retyped column changes nothing at all"
        static let missedWidening =
            "an instance that has not seen another instance's widening reads and writes without failing or dropping columns"
        static let readsAfterEachWrite =
            "every read inside a transaction sees each kind of write and delete made earlier in it"
        static let caughtErrors =
            "an operation's error caught inside a transaction rolls nothing back, for every method that throws"
        static let corners =
            "every documented corner of ValueSemantics and the filter language agrees with the reference evaluator"
        static let notConfined = "a store another instance can open is not confined to its instance"
    }

    /// A suite over new stores with `fault`; for the faults only a second instance shows, a second
    /// instance over a store's location.
    static func unforeseenSuite(_ fault: UnforeseenBrokenStore.Fault) -> ConformanceSuite {
        var suite = ConformanceSuite(storeName: "unforeseen-\(fault)") {
            try UnforeseenBrokenStore.make(fault, path: Backends.freshDatabasePath)
        }
        suite.stopsAtFirstDifference = true
        if fault.needsASecondInstance {
            suite.makeStoreSharingLocation = { store in
                guard let store = store as? UnforeseenBrokenStore, let inner = store.inner as? SQLiteStore else {
                    throw OfflineSyncError(.invalidOperation, "not a store of this suite: \(type(of: store))")
                }
                return UnforeseenBrokenStore(fault, wrapping: SQLiteStore(path: inner.path))
            }
        }
        return suite
    }
}
