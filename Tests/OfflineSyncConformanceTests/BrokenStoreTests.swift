import OfflineSync
import OfflineSyncConformance
import OfflineSyncTestSupport
import Testing

/// The suite's own mutation matrix: for every cell of the coverage matrix a ``BrokenStore`` with
/// that one bug, and proof that the group covering the cell fails it (in the named cases) on every
/// run, while a group of another rule still passes it (so each broken store breaks one rule).
@Suite(.tags(.slow), .skippedInFastRuns) struct BrokenStoreTests {
    @Test(arguments: BrokenStore.Fault.allCases)
    func theSuiteCatchesTheBrokenStore(_ fault: BrokenStore.Fault) async {
        for (group, cases) in Self.catchers(of: fault) {
            await expectCaught(fault, group: group, failingCases: cases)
        }
    }

    @Test(arguments: BrokenStore.Fault.allCases)
    func theBrokenStorePassesAGroupOfAnotherRule(_ fault: BrokenStore.Fault) async {
        let group = Self.controlGroups[fault.rule]!
        let result = await run(group, on: fault)
        #expect(result.failed == 0 && result.passed > 0, "\(fault) breaks rule \(fault.rule) only: \(result)")
    }

    /// The forced interleavings catch a concurrency bug by the first round that is sure to show
    /// it: a store whose readers wait for the writer answers only the first call of the reader
    /// thread during the write for certain, and rounds 2, 3 and 4 are the first to call `lookup`,
    /// a counting `read` and `schema` first (an earlier round may catch it too, when the call
    /// comes before the writer has quite finished).
    @Test(arguments: [
        (BrokenStore.Fault.interleavesTransactions, 1), (.writesFailWhenConcurrent, 1), (.showsUncommittedWrites, 1),
        (.readsFailDuringWrites, 1), (.lookupsFailDuringWrites, 2), (.countingReadsFailDuringWrites, 3),
        (.schemaFailsDuringWrites, 4),
    ])
    func theConcurrencyCasesCatchByTheFirstRoundThatIsSureTo(_ fault: BrokenStore.Fault, _ round: Int) async {
        let result = await run("concurrency", on: fault)
        let first = result.failureMessages.first { $0.contains("round ") } ?? ""
        #expect(
            (1...round).contains { first.contains("round \($0):") || first.contains("round \($0) ") },
            "\(fault): \(result)")
    }

    @Test func everyRuleHasBrokenStores() {
        let rules = Set(BrokenStore.Fault.allCases.map(\.rule))
        #expect(rules == Set(1...8))
        #expect(BrokenStore.Fault.allCases.count == 193)
    }

    @Test func aFailingGeneratedQueryIsPrintedWithItsSeed() async {
        let result = await run("query", on: .comparesStringsCaseInsensitively)
        let message = result.failureMessages.first { $0.contains("generated query #") }
        #expect(
            message?.contains("seed 0x\(String(ConformanceSuite.defaultSeed, radix: 16))") == true,
            "\(result.failureMessages.prefix(3))")
        #expect(message?.contains("$filter=") == true, "\(result.failureMessages.prefix(3))")
    }

    @Test func aValueFailureNamesOperationTableIdAndColumn() async {
        let result = await run("crud", on: .dropsNegativeZeroSign)
        let message = result.failureMessages.first { $0.contains("negative zero keeps its sign bit") }
        #expect(message?.contains("lookup(values, id 'negative-zero') column 'd'") == true, "\(result.failureMessages)")
    }

    // MARK: The matrix

    /// For each rule, a group that covers none of the broken stores of that rule.
    static let controlGroups: [Int: String] = [
        1: "missing", 2: "paging", 3: "paging", 4: "crud", 5: "paging", 6: "missing", 7: "crud", 8: "missing",
    ]

    /// The groups, and in each the cases, that must fail a store with `fault`.
    static func catchers(of fault: BrokenStore.Fault) -> [(group: String, cases: [String])] {
        switch fault {
        case .readsUndeclaredTablesAsEmpty, .looksUpUndeclaredTablesAsMissing, .reportsUnknownTablesAsStorageErrors:
            return [("schema", [Case.undeclared]), ("validation", [Case.unknownTables])]
        case .transactionReadsUndeclaredTablesAsEmpty, .transactionLooksUpUndeclaredTablesAsMissing,
            .ignoresServerWritesToUndeclaredTables:
            return [("transactionScope", [Case.undeclaredInTransactions])]
        case .ignoresLocalWritesToUndeclaredTables, .ignoresDeletesByQueryOnUndeclaredTables:
            return [("schema", [Case.undeclared]), ("transactionScope", [Case.undeclaredInTransactions])]
        case .ignoresDeletesByIdsFromUndeclaredTables:
            return [
                ("schema", [Case.undeclared]), ("transactionScope", [Case.undeclaredInTransactions]),
                ("validation", [Case.unknownTables]),
            ]
        case .dropsRowsWhenWidening, .dropsValuesOfColumnsAddedOnReopen: return [("schema", [Case.newColumns])]
        case .forgetsTablesLeftOutOnReopen: return [("schema", [Case.newTables])]
        case .skipsIndexBackfillOnWiden: return [("schema", [Case.indexBackfill])]
        case .acceptsRetypingEmptyTables: return [("schema", [Case.retypeEmpty])]
        case .acceptsRetypingTablesWithRows: return [("schema", [Case.retype])]
        case .schemaAnswersTheLastDeclaration: return [("schema", [Case.newTables, Case.retypeEmpty])]
        case .closeDoesNothing: return [("schema", [Case.closed, Case.reopenKeeps])]
        case .losesSchemaOnReopen:
            return [("schema", [Case.reopenKeeps, Case.newTables, Case.retype]), ("values", [Case.valuesReopen])]
        case .truncatesConvertedDates: return [("crud", [Case.normalized]), ("values", [Case.valuesInTransaction])]
        case .truncatesConvertedDatesFromServer: return [("values", [Case.valuesServer])]
        case .keepsUnknownServerColumns: return [("crud", [Case.serverDrops])]
        case .dropsUnknownLocalColumns: return [("crud", [Case.localRejects])]
        case .mergesLocalUpserts: return [("crud", [Case.replaces]), ("values", [Case.valuesReplace])]
        case .mergesServerUpserts: return [("values", [Case.valuesReplace])]
        case .keepsOldValueUnderExplicitNullFromLocal, .keepsOldValueUnderExplicitNullFromServer:
            return [("values", [Case.explicitNull])]
        case .transactionLookupAnswersItemsAsWritten, .transactionReadsAnswerItemsAsWritten,
            .transactionReadsDropNegativeZeroSign:
            return [("values", [Case.valuesInTransaction])]
        case .dropsNegativeZeroSign:
            return [("crud", [Case.negativeZero, Case.roundTrip]), ("values", [Case.valuesRoundTrip])]
        case .readsDropNegativeZeroSign, .lookupsDropNegativeZeroSign:
            return [("crud", [Case.negativeZero]), ("values", [Case.valuesRoundTrip])]
        case .reloadDropsNegativeZeroSign: return [("schema", [Case.reopenKeeps]), ("values", [Case.valuesReopen])]
        case .stripsLeadingByteOrderMark: return [("values", [Case.valuesRoundTrip, Case.valuesServer])]
        case .truncatesIndexedStringsTo255Bytes: return [("values", [Case.valuesRoundTrip, Case.longStrings])]
        case .replacesNonBMPCharactersInIndexedColumns, .canonicalisesJSON:
            return [("values", [Case.valuesRoundTrip])]
        case .truncatesDateMilliseconds, .trimsStrings, .roundsIntegersThroughDouble:
            return [("crud", [Case.roundTrip]), ("values", [Case.valuesRoundTrip])]
        case .normalisesUnicode: return [("crud", [Case.precomposed]), ("values", [Case.valuesRoundTrip])]
        case .ignoresTop: return [("paging", [Case.windows, Case.topZero]), ("limits", [Case.largePages])]
        case .returnsOneRowTooManyForTop, .ignoresSkipWithoutTop: return [("paging", [Case.windows])]
        case .capsTopAt1000: return [("limits", [Case.largePages, Case.largePagesInTransaction])]
        case .capsSkipAt1000, .ordersIdsAscendingAlways: return [("limits", [Case.largePages])]
        case .truncatesLongInLists, .failsOnInListsPast32766: return [("limits", [Case.longLists])]
        case .ordersNullsLast: return [("query", [Case.nullsFirst, Case.generated])]
        case .comparesStringsCaseInsensitively: return [("query", [Case.byteStrings, Case.generated])]
        case .totalCountIgnoresFilter: return [("paging", [Case.skipPastEnd])]
        case .indexedFiltersComparePrefixOnly: return [("values", [Case.longStrings])]
        case .transactionReadsIgnoreTop:
            return [("query", [Case.generatedInTransaction]), ("limits", [Case.largePagesInTransaction])]
        case .deleteByQueryIgnoresSkip: return [("deleteByQuery", [Case.deleteWindow])]
        case .deleteByQueryCapsTopAt1000: return [("limits", [Case.largeDeletes])]
        case .deleteByQueryTreatsNullComparisonsAsUnknown: return [("deleteByQuery", [Case.deleteFilter])]
        case .lookupOfMissingIdThrows, .transactionLookupOfMissingIdThrows, .looksUpIdsCaseInsensitively:
            return [("missing", [Case.missingLookup])]
        case .deletingMissingIdsThrows, .deletesIdsCaseInsensitively: return [("missing", [Case.missingDelete])]
        case .commitsPartialTransactions: return [("transactions", [Case.throwLeavesNothing, Case.failingOperation])]
        case .rollbackKeepsDeletesByIds, .rollbackKeepsDeletesByQuery:
            return [("transactions", [Case.throwLeavesNothing]), ("transactionScope", [Case.deletesRolledBack])]
        case .rollbackKeepsServerUpserts: return [("transactionScope", [Case.everyTableRolledBack])]
        case .rollbackRestoresOnlyTheLastWrittenTable:
            return [("transactions", [Case.throwLeavesNothing]), ("transactionScope", [Case.everyTableRolledBack])]
        case .rethrowsAWrappedError: return [("transactions", [Case.throwLeavesNothing])]
        case .transactionReadsIgnoreOwnWrites:
            return [("transactions", [Case.ownWrites]), ("query", [Case.generatedInTransaction])]
        case .transactionLookupsIgnoreOwnWrites: return [("transactions", [Case.ownWrites])]
        case .ownWritesVisibleOnlyInTheLastWrittenTable: return [("transactionScope", [Case.ownWritesEveryTable])]
        case .deleteByQueryInTransactionIgnoresOwnWrites: return [("transactionScope", [Case.deleteOwnWrites])]
        case .interleavesTransactions, .writesFailWhenConcurrent: return [("concurrency", [Case.noInterleaving])]
        case .showsUncommittedWrites, .readsFailDuringWrites, .lookupsFailDuringWrites:
            return [("concurrency", [Case.noDirtyReads])]
        case .errorsOmitTheColumn, .invalidValueErrorsNameTheFirstRow, .serverWriteErrorsOmitTheColumn:
            return [("validation", [Case.wrongTypes])]
        case .skipsQueryValidation: return [("validation", [Case.illTyped])]
        // Reopening keeps what a declaration leaves out, and what earlier reopens added.
        case .dropsColumnsLeftOutOfAReopenedTable, .dropsIndexesLeftOutOfAReopenedTable:
            return [("schema", [Case.reopenKeepsLeftOut, Case.wideningKept])]
        case .forgetsWideningAtTheNextReopen: return [("schema", [Case.wideningKept])]
        case .losesTheLastTransactionOnClose:
            return [("schema", [Case.reopenKeeps]), ("values", [Case.valuesReopen])]
        // Values as written: conversions, line ends, JSON text, ids.
        case .convertsOffsetDatesAsUTC: return [("values", [Case.valuesServer, Case.valuesInTransaction])]
        case .insertNewDropsUnknownLocalColumns: return [("crud", [Case.localRejects])]
        case .convertsLoneCarriageReturns, .unescapesSolidusInJSON:
            return [("values", [Case.valuesRoundTrip, Case.valuesServer])]
        case .trimsTrailingSpacesOfIds: return [("crud", [Case.spacedIds])]
        case .deletesIdsIgnoringTrailingSpaces:
            return [("crud", [Case.spacedIds]), ("missing", [Case.missingDelete])]
        case .looksUpMissingIdsInOtherTables: return [("missing", [Case.missingLookup])]
        // Query semantics a backend's translation can bend.
        case .ordersStringsByUTF16: return [("values", [Case.valuesRoundTrip, Case.valuesFilters])]
        case .comparesJSONIgnoringWhitespace: return [("values", [Case.valuesFilters])]
        case .comparesDatesToTheSecond: return [("values", [Case.valuesFilters]), ("query", [Case.generated])]
        case .equatesNullWithEmptyString:
            return [("values", [Case.valuesFilters]), ("query", [Case.generated, Case.bounds])]
        case .neIsNotNullSafe: return [("query", [Case.generated, Case.bounds, Case.pinned])]
        case .comparesLargeIntegersThroughDouble:
            return [("query", [Case.generated, Case.generatedIndexed, Case.pinned])]
        case .floorsModuloOfNegatives, .inListsNeverMatchNull, .lengthCountsUTF16Units, .notOfNullIsFalse,
            .trimsOnlyASCIIWhitespace, .truncatesPre1970DatesInCalendarFunctions:
            return [("query", [Case.generated, Case.pinned])]
        case .prefixMatchesStopBeforeAstralCharacters: return [("query", [Case.generatedIndexed, Case.bounds])]
        case .breaksTiesByIdDescendingWhenDescending:
            return [("query", [Case.nullsFirst, Case.generated]), ("paging", [Case.windows])]
        case .treatsUnderscoreAsWildcard: return [("query", [Case.likeCharacters, Case.generated])]
        case .treatsBackslashAsEscape: return [("query", [Case.likeCharacters])]
        case .repeatsRowsForRepeatedIdsInLists: return [("query", [Case.repeatedInLists])]
        case .transactionReadsIgnoreSelection:
            return [("query", [Case.generatedInTransaction]), ("selection", [Case.selectionInTransaction])]
        case .transactionQueryErrorsOmitTheColumn: return [("deleteByQuery", [Case.invalidDelete])]
        // Index entries left behind by deletes and rollbacks.
        case .deleteKeepsIndexEntries:
            return [("values", [Case.staleIndexEntries]), ("query", [Case.generatedIndexed])]
        case .rollbackKeepsIndexEntries: return [("values", [Case.staleIndexEntries])]
        // What a transaction sees of its own writes, and what it commits.
        case .insertNewIgnoresOwnWrites: return [("transactions", [Case.ownWrites])]
        case .filteredTransactionReadsMissOwnDeletes: return [("transactionScope", [Case.ownWritesEveryTable])]
        case .rollsBackWhenTheBodyCaughtAnError: return [("transactions", [Case.caughtErrorCommits])]
        // Calls that fail while another thread writes.
        case .countingReadsFailDuringWrites, .schemaFailsDuringWrites: return [("concurrency", [Case.noDirtyReads])]
        // Writes of batches: repeated ids, insertNew's report and what it leaves, chunks.
        case .keepsTheFirstOfDuplicateIdsInABatch: return [("crud", [Case.lastDuplicateWins])]
        case .insertNewOverwritesPresentRows, .insertNewReportsEveryId:
            return [("crud", [Case.insertNew]), ("transactions", [Case.ownWrites])]
        case .insertNewMissesDuplicatesInsideTheBatch: return [("crud", [Case.insertNew])]
        case .lookupsAnswerStaleRowsAfterServerUpserts: return [("values", [Case.explicitNull])]
        case .upsertsDropTheRowsPastTheFirst1000: return [("limits", [Case.largeUpserts, Case.largePages])]
        case .deletesOnlyTheFirst999Ids: return [("limits", [Case.largeIdDeletes])]
        case .deleteByQueryTruncatesInListsAt999: return [("limits", [Case.largeDeletes])]
        // Values a backend's storage changes.
        case .storesEmptyStringsAsNull:
            return [("crud", [Case.roundTrip]), ("values", [Case.valuesRoundTrip]), ("query", [Case.pinned])]
        case .flushesSubnormalDoublesToZero:
            return [("crud", [Case.roundTrip]), ("values", [Case.valuesRoundTrip]), ("query", [Case.numbers])]
        // Selections, counts and windows.
        case .readsIgnoreSelectionOutsideTransactions:
            return [("selection", [Case.selectionChosen, Case.selectionEmpty])]
        case .selectionDropsTheId: return [("selection", [Case.selectionChosen, Case.selectionUnselected])]
        case .totalCountSubtractsSkip:
            return [("paging", [Case.windows, Case.skipPastEnd]), ("query", [Case.pinned])]
        case .totalCountCountsOnlyThePage: return [("paging", [Case.windows]), ("query", [Case.pinned])]
        case .skipPastTheEndAnswersTheLastPage:
            return [("paging", [Case.windows, Case.skipPastEnd]), ("limits", [Case.largePages])]
        // Orderings and comparisons.
        case .ordersNumbersAsText: return [("query", [Case.numbers, Case.pinned])]
        case .ordersByTheFirstSortKeyOnly:
            return [("query", [Case.nullsFirst, Case.pinned]), ("selection", [Case.selectionUnselected])]
        case .breaksTiesByIdInTheLastKeysDirection: return [("query", [Case.pinned])]
        case .truncatesDoubleLiteralsComparedWithIntegers:
            return [("query", [Case.numbers, Case.bounds, Case.pinned])]
        case .comparesStringsByCanonicalEquivalence: return [("query", [Case.byteStrings])]
        // Functions as an SQL dialect or a library computes them.
        case .matchesSubstringsCaseInsensitively, .foldsCaseOfNonASCIILetters:
            return [("query", [Case.byteStrings, Case.pinned])]
        case .roundsHalvesToEven, .dividesIntegersAsDoubles, .concatSkipsNulls, .indexOfCountsUTF8Bytes:
            return [("query", [Case.pinned])]
        // Deletes by query: the rows chosen, the count answered, the counts afterwards.
        case .deleteByQueryIgnoresOrderByWithTop:
            return [("deleteByQuery", [Case.deleteOrdered, Case.deleteWindow])]
        case .deleteByQueryReportsTheMatchingCount:
            return [("deleteByQuery", [Case.deleteOrdered, Case.deleteWindow, Case.deleteNothing])]
        case .unfilteredCountIgnoresDeletesByQuery:
            return [("deleteByQuery", [Case.deleteFilter, Case.deleteOrdered, Case.deleteWindow, Case.deleteAll])]
        // Keys of tables whose names extend another's, values past a record's fixed width.
        case .readsRowsOfTablesWhoseNamesExtendTheTable, .looksUpIdsOfTablesWhoseNamesExtendTheTable:
            return [("missing", [Case.prefixedTables])]
        case .dropsValuesPastTheSixtyFourthColumn: return [("values", [Case.wideRows])]
        case .storesMalformedJSONAsEmptyArray: return [("validation", [Case.wrongTypes])]
        case .insertNewRejectsUnknownServerColumns: return [("crud", [Case.serverDrops])]
        // Collations, orderings and functions of a translation or an index's key encoding.
        case .comparesStringsIgnoringTrailingSpaces: return [("query", [Case.byteStrings, Case.generated])]
        case .ordersStringsCaseInsensitively:
            return [("query", [Case.byteStrings, Case.generated]), ("values", [Case.valuesFilters])]
        case .ordersIntegersThroughDouble:
            return [("query", [Case.generated, Case.generatedIndexed]), ("values", [Case.valuesFilters])]
        case .endsWithOfAnEmptySuffixIsFalse: return [("query", [Case.likeCharacters])]
        case .emptyInListsMatchEverything: return [("query", [Case.bounds, Case.generated])]
        case .roundsHalvesUp, .indexOfIsOneBased, .computesCalendarFunctionsInLocalTime:
            return [("query", [Case.generated, Case.pinned])]
        // Windows and counts computed apart from the filter.
        case .appliesSkipBeforeTheFilter:
            return [("query", [Case.generated]), ("limits", [Case.largePages, Case.largePagesInTransaction])]
        case .countsAtTopZeroIgnoreTheFilter: return [("deleteByQuery", [Case.deleteFilter, Case.deleteWindow])]
        case .upsertKeepsOldIndexEntries:
            return [("values", [Case.explicitNull, Case.valuesReplace]), ("query", [Case.generatedIndexed])]
        // Transactions: rollback of insertNew, counts of own writes, what a reopen replays.
        case .rollbackKeepsInsertNewRows: return [("transactions", [Case.throwLeavesNothing])]
        case .transactionCountsIgnoreOwnWrites:
            return [("transactions", [Case.ownWrites]), ("transactionScope", [Case.ownWritesEveryTable])]
        case .reopenBringsBackDeletedRows, .reopenKeepsTheFirstVersionOfReplacedRows:
            return [("schema", [Case.reopenKeeps])]
        // A closed store, and what the instance's own opens say about the stored schema.
        case .closedStoreLookupsAnswerNil: return [("schema", [Case.closed])]
        case .storedSchemaChangedCountsOwnReopens: return [("schema", [Case.ownOpensUnchanged])]
        // insertNew: the values it checks, the present ids it reports.
        case .insertNewStoresInvalidValuesAsNull: return [("validation", [Case.wrongTypes])]
        case .insertNewReportsARepeatedPresentIdOnce: return [("crud", [Case.insertNew])]
        // Ids read as C strings, rows deleted earlier in a transaction, reserved names.
        case .truncatesIdsAtNUL: return [("missing", [Case.missingLookup, Case.missingDelete])]
        case .deleteByQueryCountsRowsDeletedEarlierInTheTransaction:
            return [("transactionScope", [Case.deleteOwnWrites])]
        case .checksReservedPrefixesCaseSensitively, .checksReservedPrefixesOnlyOnFirstOpen:
            return [("validation", [Case.reservedNames])]
        // Key encodings, bindings and arithmetic of a translation; windows and projections.
        case .ordersNegativeZeroBeforeZero: return [("query", [Case.numbers]), ("values", [Case.valuesFilters])]
        case .castsInListDoublesToIntegers: return [("query", [Case.pinned, Case.generated])]
        case .wrapsIntegerOverflow, .substringCountsNegativeStartsFromTheEnd:
            return [("query", [Case.pinned, Case.clientForms])]
        case .computesCalendarFunctionsWithAJulianCutover: return [("query", [Case.pinned])]
        case .comparesStringsUpToNUL: return [("query", [Case.byteStrings, Case.generated])]
        case .appliesTopBeforeSkip: return [("paging", [Case.windows]), ("limits", [Case.largePages])]
        case .deleteByQueryTreatsTopZeroAsNoLimit: return [("deleteByQuery", [Case.deleteNothing])]
        case .treatsNullBooleansAsFalse: return [("values", [Case.valuesFilters, Case.explicitNull])]
        case .ordersByUnselectedColumnsAsNull:
            return [("selection", [Case.selectionUnselected, Case.selectionInTransaction])]
        // Reopens with another flag or no table, row counters, batches past 999, system columns, long values.
        case .readsUnsyncedTablesAsSyncedAfterReopen:
            return [("schema", [Case.newTables, Case.wideningKept, Case.retypeEmpty, Case.emptyReopen])]
        case .refusesToOpenWithAnEmptySchema: return [("schema", [Case.emptyReopen])]
        case .insertNewCountsPresentRowsAsInserted:
            return [("crud", [Case.insertNew]), ("limits", [Case.largeInsertNew])]
        case .insertNewFindsOnlyTheFirst999PresentIds: return [("limits", [Case.largeInsertNew])]
        case .selectionKeepsSystemColumns, .selectionLeavesOutSystemColumns:
            return [("selection", [Case.selectionSystemColumns])]
        case .countsMissingIdsAsDeleted: return [("missing", [Case.missingDelete, Case.deletedIsMissing])]
        case .readsCutValuesPast64KiB: return [("crud", [Case.largeStrings])]
        }
    }

    /// The names of the cases the matrix refers to.
    enum Case {
        static let undeclared = "an undeclared table is an unknownTable error"
        static let reopenKeeps = "reopening keeps the data"
        static let newColumns = "reopening adds new columns and old rows read them as null"
        static let newTables = "reopening adds new tables and keeps tables left out"
        static let indexBackfill = "an index added on reopen covers the rows written before"
        static let retype = "reopening with a changed column type is rejected"
        static let retypeEmpty = "reopening with a changed column type is rejected while the table is empty"
        static let closed = "a closed store refuses to work"
        static let undeclaredInTransactions = "an undeclared table is an unknownTable error in every transaction method"
        static let ownWritesEveryTable = "a transaction sees its own writes in every table it wrote, not only the last"
        static let deletesRolledBack = "a throw rolls back tables written only by delete(ids:) or delete(matching:)"
        static let everyTableRolledBack = "a throw rolls back every table, the first written as well as the last"
        static let deleteOwnWrites = "delete(matching:) inside a transaction deletes the rows the transaction wrote"
        static let unknownTables = "unknown and badly named tables are rejected in every operation"
        static let wrongTypes = "values of the wrong type are rejected and nothing is stored"
        static let illTyped = "ill-typed queries are rejected naming the operand"
        static let roundTrip = "every value type round-trips exactly"
        static let negativeZero = "negative zero keeps its sign bit"
        static let precomposed = "precomposed and decomposed é are different ids and values"
        static let replaces = "an upsert replaces the whole row"
        static let normalized = "stored values are the normalized values"
        static let serverDrops = "server writes drop unknown columns"
        static let localRejects = "local writes reject unknown columns"
        static let valuesRoundTrip = "every value kind round-trips in indexed and unindexed columns"
        static let valuesServer = "server writes store the same values as local writes"
        static let valuesInTransaction = "a transaction reads back the values it wrote, normalized"
        static let valuesReopen = "values survive closing and reopening"
        static let explicitNull = "an explicit null over an existing value clears it, from either origin"
        static let valuesReplace = "an upsert replaces the whole row, from either origin and inside a transaction"
        static let longStrings = "strings past 255 bytes in indexed columns order and compare by every byte"
        static let windows = "every skip and top window agrees with the reference evaluator"
        static let topZero = "top 0 answers no rows and the full count"
        static let skipPastEnd = "skip beyond the end answers no rows and the full count"
        static let largePages = "top and skip past 1,000 agree with the reference evaluator"
        static let largePagesInTransaction = "top and skip past 1,000 agree with the reference inside a transaction"
        static let longLists = "in lists past 999 and past 32,766 values find every listed row"
        static let largeDeletes = "deleting by a query with a long in list or a large top removes exactly those rows"
        static let generated = "generated queries agree with the reference evaluator"
        static let generatedInTransaction = "generated queries inside a transaction see its writes"
        static let nullsFirst = "nulls sort first ascending and last descending, ties by id"
        static let byteStrings = "strings compare by UTF-8 bytes, case-sensitively"
        static let deleteFilter = "deleting by a filter removes exactly the matching rows"
        static let deleteWindow = "deleting with skip and top removes the window"
        static let missingLookup = "looking up a missing id answers nil"
        static let missingDelete = "deleting missing ids does nothing"
        static let throwLeavesNothing = "a throw inside a transaction leaves nothing behind"
        static let failingOperation = "a failing operation inside a transaction rolls back the earlier ones"
        static let ownWrites = "reads inside a transaction see its own writes"
        static let noInterleaving = "read-modify-write transactions on two OS threads never interleave"
        static let noDirtyReads = "readers on other OS threads never see a transaction's uncommitted writes"
        static let reopenKeepsLeftOut = "reopening keeps the columns and indexes a table's declaration leaves out"
        static let wideningKept = "a widening is kept by later reopens that leave it out"
        static let spacedIds = "ids that differ only in spaces are different rows"
        static let valuesFilters = "filters on indexed columns find every hard value"
        static let staleIndexEntries = "rows deleted or rolled back are no longer found through an index"
        static let generatedIndexed = "generated queries on indexed columns agree with the reference evaluator"
        static let bounds = "bounds at the edges of ids and indexed columns"
        static let likeCharacters = "startswith, endswith and contains take %, _ and \\ literally"
        static let repeatedInLists = "in lists with repeated values answer each row once"
        static let invalidDelete = "deleting by an invalid query deletes nothing"
        static let pinned = "pinned filter and ordering semantics agree with the reference evaluator"
        static let numbers = "numbers compare numerically and negative zero equals zero"
        static let lastDuplicateWins = "the last of duplicate ids in one upsert wins"
        static let insertNew = "insertNew inserts absent ids, keeps present rows and their index entries"
        static let largeUpserts = "more than 1,000 rows upserted at once are all stored"
        static let largeIdDeletes = "deleting more than 32,766 ids removes every listed row"
        static let selectionChosen = "a selection returns the chosen columns and id"
        static let selectionEmpty = "an empty selection returns ids only"
        static let selectionUnselected = "filter and ordering may use columns that are not selected"
        static let selectionInTransaction = "a selection applies inside a transaction, to committed and pending rows"
        static let deleteOrdered = "deleting by filter, ordering and top removes the first rows in order"
        static let deleteNothing = "deleting with top 0 or skip beyond the end removes nothing"
        static let deleteAll = "deleting without a filter empties the table"
        static let prefixedTables = "a table whose name extends another's keeps its rows apart"
        static let wideRows = "rows of 100 columns round-trip"
        static let clientForms = "the Azure clients' filter forms agree with the reference evaluator"
        static let ownOpensUnchanged = "storedSchemaChanged() ignores the instance's own opens and writes"
        static let reservedNames = "names starting with a prefix the store reserves are rejected at open"
        static let emptyReopen = "reopening with an empty schema keeps every table and its rows"
        static let largeInsertNew = "insertNew of more than 1,000 rows keeps and reports every present row"
        static let selectionSystemColumns =
            "a selection answers a synced table's system columns only when it selects them"
        static let deletedIsMissing = "a deleted id is missing"
        static let largeStrings = "1 MiB strings round-trip"
        static let caughtErrorCommits =
            "a transaction whose body catches an operation's error and returns commits its other writes"
    }

    // MARK: Running

    private func run(_ group: String, on fault: BrokenStore.Fault) async -> GroupResult {
        await ConformanceSuite(storeName: "broken-\(fault)") { BrokenStore(fault) }.run(group: group)
    }

    /// Runs the cases `failingCases` of `group` on a store with `fault` and expects each to fail
    /// (the rest of the group is not run: the named cases are what must catch the fault).
    private func expectCaught(_ fault: BrokenStore.Fault, group: String, failingCases: [String]) async {
        var suite = ConformanceSuite(storeName: "broken-\(fault)") { BrokenStore(fault) }
        suite.stopsAtFirstDifference = true
        let result = await suite.run(group: group, cases: failingCases)
        #expect(result.failed > 0, "the \(group) group should fail a store that \(fault): \(result)")
        for name in failingCases {
            let outcome = result.cases.first { $0.name == name }?.outcome
            guard case .failed(let messages)? = outcome, !messages.isEmpty else {
                Issue.record("case '\(name)' of \(group) should fail for \(fault), got \(String(describing: outcome))")
                continue
            }
        }
    }
}
