import Foundation
import OfflineSync
import Synchronization

/// A test double that wraps ``InMemoryStore`` and breaks exactly one rule of the store contract,
/// the way a plausible backend bug would, to prove that the conformance suite catches that bug.
///
/// Each ``Fault`` is one cell of the rule-by-method coverage matrix (see the conformance DocC
/// catalog, "Coverage matrix"): it names the rule of `LocalStore` it breaks in ``Fault/rule``
/// and the method through which it breaks it. Everything else is passed through unchanged.
final class BrokenStore: LocalStore {
    /// The one bug a ``BrokenStore`` has.
    enum Fault: String, Sendable, CaseIterable, CustomStringConvertible {
        // Rule 1: declare before use, widening, no retyping, the schema getter, close.
        case readsUndeclaredTablesAsEmpty
        case looksUpUndeclaredTablesAsMissing
        case transactionReadsUndeclaredTablesAsEmpty
        case transactionLooksUpUndeclaredTablesAsMissing
        case ignoresLocalWritesToUndeclaredTables
        case ignoresServerWritesToUndeclaredTables
        case ignoresDeletesByIdsFromUndeclaredTables
        case ignoresDeletesByQueryOnUndeclaredTables
        case dropsRowsWhenWidening
        case forgetsTablesLeftOutOnReopen
        case skipsIndexBackfillOnWiden
        case acceptsRetypingEmptyTables
        case acceptsRetypingTablesWithRows
        case schemaAnswersTheLastDeclaration
        case closeDoesNothing
        case losesSchemaOnReopen
        case dropsValuesOfColumnsAddedOnReopen
        case dropsColumnsLeftOutOfAReopenedTable
        case dropsIndexesLeftOutOfAReopenedTable
        case forgetsWideningAtTheNextReopen
        /// Answers `nil` to a lookup on a closed store (a closed handle read as an empty table)
        /// instead of throwing.
        case closedStoreLookupsAnswerNil
        /// Says the stored schema changed after this instance's own reopen widened it (it compares
        /// with the schema of the first open, not with the one it last wrote).
        case storedSchemaChangedCountsOwnReopens
        /// Reads an unsynced table back as synced, with the system columns, after a reopen: a
        /// catalog read that rebuilds each declaration with `TableSchema`'s default `synced: true`.
        case readsUnsyncedTablesAsSyncedAfterReopen
        /// Refuses `open(schema:)` with a schema that declares no table (a "declare at least one
        /// table" check), which is how a caller reopens a store to read its stored schema.
        case refusesToOpenWithAnEmptySchema
        // Rule 2: values are checked by the core; upserts replace the whole row.
        case truncatesConvertedDates
        case truncatesConvertedDatesFromServer
        case keepsUnknownServerColumns
        case dropsUnknownLocalColumns
        case mergesLocalUpserts
        case mergesServerUpserts
        case keepsOldValueUnderExplicitNullFromLocal
        case keepsOldValueUnderExplicitNullFromServer
        case transactionLookupAnswersItemsAsWritten
        case transactionReadsAnswerItemsAsWritten
        case insertNewDropsUnknownLocalColumns
        case convertsOffsetDatesAsUTC
        case keepsTheFirstOfDuplicateIdsInABatch
        case insertNewOverwritesPresentRows
        case insertNewReportsEveryId
        case insertNewMissesDuplicatesInsideTheBatch
        case lookupsAnswerStaleRowsAfterServerUpserts
        case insertNewRejectsUnknownServerColumns
        /// Stores a value `insertNew` cannot convert (NaN, a fraction for an integer, text for a
        /// number) as null instead of throwing: an encoder of its own that skips the checks.
        case insertNewStoresInvalidValuesAsNull
        /// Reports an id `insertNew` found present only once when the batch lists it again (the
        /// present ids collected in a set).
        case insertNewReportsARepeatedPresentIdOnce
        /// Adds every item of an `insertNew` batch to the row counter that answers unfiltered
        /// counts, the present ones too.
        case insertNewCountsPresentRowsAsInserted
        // Rule 3: values round-trip exactly.
        case dropsNegativeZeroSign
        case readsDropNegativeZeroSign
        case lookupsDropNegativeZeroSign
        case transactionReadsDropNegativeZeroSign
        case reloadDropsNegativeZeroSign
        case stripsLeadingByteOrderMark
        case truncatesIndexedStringsTo255Bytes
        case replacesNonBMPCharactersInIndexedColumns
        case canonicalisesJSON
        case truncatesDateMilliseconds
        case normalisesUnicode
        case trimsStrings
        case roundsIntegersThroughDouble
        case convertsLoneCarriageReturns
        case unescapesSolidusInJSON
        case trimsTrailingSpacesOfIds
        case storesEmptyStringsAsNull
        case flushesSubnormalDoublesToZero
        case dropsValuesPastTheSixtyFourthColumn
        /// Stores JSON text that is not one array or object as `[]`, as a lenient parser would.
        case storesMalformedJSONAsEmptyArray
        /// Answers strings and JSON texts longer than 65,535 UTF-8 bytes cut to that length in
        /// `read`, where `lookup` answers them whole: the query path copies each value into a row
        /// buffer with a 16-bit length.
        case readsCutValuesPast64KiB
        // Rule 4: queries mean what QueryEvaluator says.
        case ignoresTop
        case returnsOneRowTooManyForTop
        case ignoresSkipWithoutTop
        case capsTopAt1000
        case capsSkipAt1000
        case truncatesLongInLists
        case failsOnInListsPast32766
        case ordersIdsAscendingAlways
        case ordersNullsLast
        case comparesStringsCaseInsensitively
        case totalCountIgnoresFilter
        case indexedFiltersComparePrefixOnly
        case transactionReadsIgnoreTop
        case deleteByQueryIgnoresSkip
        case deleteByQueryCapsTopAt1000
        case deleteByQueryTreatsNullComparisonsAsUnknown
        case ordersStringsByUTF16
        case treatsUnderscoreAsWildcard
        case treatsBackslashAsEscape
        case repeatsRowsForRepeatedIdsInLists
        case comparesJSONIgnoringWhitespace
        case comparesLargeIntegersThroughDouble
        case neIsNotNullSafe
        case inListsNeverMatchNull
        case notOfNullIsFalse
        case floorsModuloOfNegatives
        case prefixMatchesStopBeforeAstralCharacters
        case breaksTiesByIdDescendingWhenDescending
        case equatesNullWithEmptyString
        case lengthCountsUTF16Units
        case trimsOnlyASCIIWhitespace
        case truncatesPre1970DatesInCalendarFunctions
        case comparesDatesToTheSecond
        case deleteKeepsIndexEntries
        case transactionReadsIgnoreSelection
        case upsertsDropTheRowsPastTheFirst1000
        case deletesOnlyTheFirst999Ids
        case deleteByQueryTruncatesInListsAt999
        case readsIgnoreSelectionOutsideTransactions
        case selectionDropsTheId
        case totalCountSubtractsSkip
        case totalCountCountsOnlyThePage
        case skipPastTheEndAnswersTheLastPage
        case ordersNumbersAsText
        case ordersByTheFirstSortKeyOnly
        case breaksTiesByIdInTheLastKeysDirection
        case truncatesDoubleLiteralsComparedWithIntegers
        case comparesStringsByCanonicalEquivalence
        case deleteByQueryIgnoresOrderByWithTop
        case deleteByQueryReportsTheMatchingCount
        case unfilteredCountIgnoresDeletesByQuery
        case matchesSubstringsCaseInsensitively
        case foldsCaseOfNonASCIILetters
        case roundsHalvesToEven
        case dividesIntegersAsDoubles
        case concatSkipsNulls
        case indexOfCountsUTF8Bytes
        case readsRowsOfTablesWhoseNamesExtendTheTable
        case comparesStringsIgnoringTrailingSpaces
        case endsWithOfAnEmptySuffixIsFalse
        case ordersIntegersThroughDouble
        case appliesSkipBeforeTheFilter
        case countsAtTopZeroIgnoreTheFilter
        case roundsHalvesUp
        case indexOfIsOneBased
        case upsertKeepsOldIndexEntries
        case computesCalendarFunctionsInLocalTime
        case ordersStringsCaseInsensitively
        case emptyInListsMatchEverything
        /// Orders `-0.0` before `0.0` (an index key of the double's bits), where they tie and
        /// fall back to `id`.
        case ordersNegativeZeroBeforeZero
        /// Converts the doubles of an `in` list on an integer column to integers (binding every
        /// value with the column's type), so `i in (2.5)` matches 2.
        case castsInListDoublesToIntegers
        /// Wraps integer `add`, `sub` and `mul` around on overflow instead of going on in doubles.
        case wrapsIntegerOverflow
        /// Computes calendar functions with Foundation's Gregorian calendar, which is Julian
        /// before 15 October 1582, not the proleptic Gregorian calendar of ISO 8601.
        case computesCalendarFunctionsWithAJulianCutover
        /// Compares and orders strings as C strings: U+0000 ends them.
        case comparesStringsUpToNUL
        /// Applies `top` before `skip` (the window ends at row `top`, not at `skip + top`).
        case appliesTopBeforeSkip
        /// Counts a negative `substring` start from the end of the string, as Python does.
        case substringCountsNegativeStartsFromTheEnd
        /// Deletes every matching row for `delete(matching:)` with `top` 0 (a `LIMIT` left out
        /// when it is 0).
        case deleteByQueryTreatsTopZeroAsNoLimit
        /// Reads a null boolean as `false` in comparisons (`done eq false` matches null).
        case treatsNullBooleansAsFalse
        /// Sorts after projecting the selection, so a sort key that is not selected reads as null
        /// and the rows fall back to the next key and `id`.
        case ordersByUnselectedColumnsAsNull
        /// Looks for the present ids of an `insertNew` batch with one `IN` list of its first 999
        /// ids (SQLite's old parameter limit), so a present row past them is taken as absent:
        /// replaced, and not reported.
        case insertNewFindsOnlyTheFirst999PresentIds
        /// Answers the system columns (`createdAt`, `updatedAt`, `version`, `deleted`) of a synced
        /// table whatever the selection, as a projection that always adds what sync needs.
        case selectionKeepsSystemColumns
        /// Answers a selected system column as null: the projection maps the selected names onto
        /// the app's columns only.
        case selectionLeavesOutSystemColumns
        // Rule 5: missing ids are not errors.
        case lookupOfMissingIdThrows
        case transactionLookupOfMissingIdThrows
        case deletingMissingIdsThrows
        case looksUpIdsCaseInsensitively
        case deletesIdsCaseInsensitively
        case looksUpMissingIdsInOtherTables
        case deletesIdsIgnoringTrailingSpaces
        case looksUpIdsOfTablesWhoseNamesExtendTheTable
        /// Passes ids to lookups and deletes as C strings: an id holding U+0000 finds the row whose
        /// id is the part before it.
        case truncatesIdsAtNUL
        /// Lowers the row counter that answers unfiltered counts by every id `delete(ids:)` lists,
        /// present, missing or repeated.
        case countsMissingIdsAsDeleted
        // Rule 6: atomic, isolated, serialised transactions that see their own writes.
        case commitsPartialTransactions
        case rollbackKeepsDeletesByIds
        case rollbackKeepsDeletesByQuery
        case rollbackKeepsServerUpserts
        case rollbackRestoresOnlyTheLastWrittenTable
        case rethrowsAWrappedError
        case transactionReadsIgnoreOwnWrites
        case transactionLookupsIgnoreOwnWrites
        case ownWritesVisibleOnlyInTheLastWrittenTable
        case deleteByQueryInTransactionIgnoresOwnWrites
        case interleavesTransactions
        case showsUncommittedWrites
        case rollbackKeepsIndexEntries
        case rollsBackWhenTheBodyCaughtAnError
        case insertNewIgnoresOwnWrites
        case filteredTransactionReadsMissOwnDeletes
        case losesTheLastTransactionOnClose
        case rollbackKeepsInsertNewRows
        case transactionCountsIgnoreOwnWrites
        case reopenBringsBackDeletedRows
        case reopenKeepsTheFirstVersionOfReplacedRows
        /// Chooses and counts the rows of `delete(matching:)` through an index that still lists
        /// the rows deleted earlier in the transaction.
        case deleteByQueryCountsRowsDeletedEarlierInTheTransaction
        // Rule 7: errors, not crashes, naming what is at fault.
        case reportsUnknownTablesAsStorageErrors
        case errorsOmitTheColumn
        case skipsQueryValidation
        case serverWriteErrorsOmitTheColumn
        case transactionQueryErrorsOmitTheColumn
        case invalidValueErrorsNameTheFirstRow
        /// Reserves a name prefix but rejects it only in the letter case it was written in.
        case checksReservedPrefixesCaseSensitively
        /// Rejects names with a reserved prefix at the first open only, not in what a reopen adds.
        case checksReservedPrefixesOnlyOnFirstOpen
        // Rule 8: any method from any thread.
        case readsFailDuringWrites
        case lookupsFailDuringWrites
        case writesFailWhenConcurrent
        case schemaFailsDuringWrites
        case countingReadsFailDuringWrites

        var description: String { rawValue }

        /// The rule of `LocalStore` the fault breaks, as numbered in its doc comment.
        var rule: Int {
            switch self {
            case .readsUndeclaredTablesAsEmpty, .looksUpUndeclaredTablesAsMissing,
                .transactionReadsUndeclaredTablesAsEmpty, .transactionLooksUpUndeclaredTablesAsMissing,
                .ignoresLocalWritesToUndeclaredTables, .ignoresServerWritesToUndeclaredTables,
                .ignoresDeletesByIdsFromUndeclaredTables, .ignoresDeletesByQueryOnUndeclaredTables,
                .dropsRowsWhenWidening, .forgetsTablesLeftOutOnReopen, .skipsIndexBackfillOnWiden,
                .acceptsRetypingEmptyTables, .acceptsRetypingTablesWithRows, .schemaAnswersTheLastDeclaration,
                .closeDoesNothing, .losesSchemaOnReopen, .dropsValuesOfColumnsAddedOnReopen,
                .dropsColumnsLeftOutOfAReopenedTable, .dropsIndexesLeftOutOfAReopenedTable,
                .forgetsWideningAtTheNextReopen, .closedStoreLookupsAnswerNil, .storedSchemaChangedCountsOwnReopens,
                .readsUnsyncedTablesAsSyncedAfterReopen, .refusesToOpenWithAnEmptySchema:
                return 1
            case .truncatesConvertedDates, .truncatesConvertedDatesFromServer, .transactionReadsAnswerItemsAsWritten,
                .keepsUnknownServerColumns, .dropsUnknownLocalColumns, .mergesLocalUpserts,
                .mergesServerUpserts, .keepsOldValueUnderExplicitNullFromLocal,
                .keepsOldValueUnderExplicitNullFromServer,
                .transactionLookupAnswersItemsAsWritten, .insertNewDropsUnknownLocalColumns, .convertsOffsetDatesAsUTC,
                .keepsTheFirstOfDuplicateIdsInABatch, .insertNewOverwritesPresentRows, .insertNewReportsEveryId,
                .insertNewMissesDuplicatesInsideTheBatch, .lookupsAnswerStaleRowsAfterServerUpserts,
                .insertNewRejectsUnknownServerColumns, .insertNewStoresInvalidValuesAsNull,
                .insertNewReportsARepeatedPresentIdOnce, .insertNewCountsPresentRowsAsInserted:
                return 2
            case .dropsNegativeZeroSign, .readsDropNegativeZeroSign, .lookupsDropNegativeZeroSign,
                .transactionReadsDropNegativeZeroSign, .reloadDropsNegativeZeroSign, .stripsLeadingByteOrderMark,
                .truncatesIndexedStringsTo255Bytes, .replacesNonBMPCharactersInIndexedColumns, .canonicalisesJSON,
                .truncatesDateMilliseconds, .normalisesUnicode, .trimsStrings, .roundsIntegersThroughDouble,
                .convertsLoneCarriageReturns, .unescapesSolidusInJSON, .trimsTrailingSpacesOfIds,
                .storesEmptyStringsAsNull, .flushesSubnormalDoublesToZero, .dropsValuesPastTheSixtyFourthColumn,
                .storesMalformedJSONAsEmptyArray, .readsCutValuesPast64KiB:
                return 3
            case .ignoresTop, .returnsOneRowTooManyForTop, .ignoresSkipWithoutTop, .capsTopAt1000, .capsSkipAt1000,
                .truncatesLongInLists, .failsOnInListsPast32766, .ordersIdsAscendingAlways, .ordersNullsLast,
                .comparesStringsCaseInsensitively, .totalCountIgnoresFilter, .indexedFiltersComparePrefixOnly,
                .transactionReadsIgnoreTop, .deleteByQueryIgnoresSkip, .deleteByQueryCapsTopAt1000,
                .deleteByQueryTreatsNullComparisonsAsUnknown, .ordersStringsByUTF16, .treatsUnderscoreAsWildcard,
                .treatsBackslashAsEscape, .repeatsRowsForRepeatedIdsInLists, .comparesJSONIgnoringWhitespace,
                .comparesLargeIntegersThroughDouble, .neIsNotNullSafe, .inListsNeverMatchNull, .notOfNullIsFalse,
                .floorsModuloOfNegatives, .prefixMatchesStopBeforeAstralCharacters,
                .breaksTiesByIdDescendingWhenDescending, .equatesNullWithEmptyString, .lengthCountsUTF16Units,
                .trimsOnlyASCIIWhitespace, .truncatesPre1970DatesInCalendarFunctions, .comparesDatesToTheSecond,
                .deleteKeepsIndexEntries, .transactionReadsIgnoreSelection, .upsertsDropTheRowsPastTheFirst1000,
                .deletesOnlyTheFirst999Ids, .deleteByQueryTruncatesInListsAt999,
                .readsIgnoreSelectionOutsideTransactions,
                .selectionDropsTheId, .totalCountSubtractsSkip, .totalCountCountsOnlyThePage,
                .skipPastTheEndAnswersTheLastPage, .ordersNumbersAsText,
                .ordersByTheFirstSortKeyOnly, .breaksTiesByIdInTheLastKeysDirection,
                .truncatesDoubleLiteralsComparedWithIntegers, .comparesStringsByCanonicalEquivalence,
                .deleteByQueryIgnoresOrderByWithTop, .deleteByQueryReportsTheMatchingCount,
                .unfilteredCountIgnoresDeletesByQuery, .matchesSubstringsCaseInsensitively, .foldsCaseOfNonASCIILetters,
                .roundsHalvesToEven, .dividesIntegersAsDoubles, .concatSkipsNulls, .indexOfCountsUTF8Bytes,
                .readsRowsOfTablesWhoseNamesExtendTheTable, .comparesStringsIgnoringTrailingSpaces,
                .endsWithOfAnEmptySuffixIsFalse, .ordersIntegersThroughDouble, .appliesSkipBeforeTheFilter,
                .countsAtTopZeroIgnoreTheFilter, .roundsHalvesUp, .indexOfIsOneBased, .upsertKeepsOldIndexEntries,
                .computesCalendarFunctionsInLocalTime, .ordersStringsCaseInsensitively, .emptyInListsMatchEverything,
                .ordersNegativeZeroBeforeZero, .castsInListDoublesToIntegers, .wrapsIntegerOverflow,
                .computesCalendarFunctionsWithAJulianCutover, .comparesStringsUpToNUL, .appliesTopBeforeSkip,
                .substringCountsNegativeStartsFromTheEnd, .deleteByQueryTreatsTopZeroAsNoLimit,
                .treatsNullBooleansAsFalse,
                .ordersByUnselectedColumnsAsNull, .insertNewFindsOnlyTheFirst999PresentIds,
                .selectionKeepsSystemColumns,
                .selectionLeavesOutSystemColumns:
                return 4
            case .lookupOfMissingIdThrows, .transactionLookupOfMissingIdThrows, .deletingMissingIdsThrows,
                .looksUpIdsCaseInsensitively, .deletesIdsCaseInsensitively, .looksUpMissingIdsInOtherTables,
                .deletesIdsIgnoringTrailingSpaces, .looksUpIdsOfTablesWhoseNamesExtendTheTable, .truncatesIdsAtNUL,
                .countsMissingIdsAsDeleted:
                return 5
            case .commitsPartialTransactions, .rollbackKeepsDeletesByIds, .rollbackKeepsDeletesByQuery,
                .rollbackKeepsServerUpserts, .rollbackRestoresOnlyTheLastWrittenTable, .rethrowsAWrappedError,
                .transactionReadsIgnoreOwnWrites, .transactionLookupsIgnoreOwnWrites,
                .ownWritesVisibleOnlyInTheLastWrittenTable, .deleteByQueryInTransactionIgnoresOwnWrites,
                .interleavesTransactions, .showsUncommittedWrites, .rollbackKeepsIndexEntries,
                .rollsBackWhenTheBodyCaughtAnError, .insertNewIgnoresOwnWrites, .filteredTransactionReadsMissOwnDeletes,
                .losesTheLastTransactionOnClose, .rollbackKeepsInsertNewRows, .transactionCountsIgnoreOwnWrites,
                .reopenBringsBackDeletedRows, .reopenKeepsTheFirstVersionOfReplacedRows,
                .deleteByQueryCountsRowsDeletedEarlierInTheTransaction:
                return 6
            case .reportsUnknownTablesAsStorageErrors, .errorsOmitTheColumn, .skipsQueryValidation,
                .serverWriteErrorsOmitTheColumn, .transactionQueryErrorsOmitTheColumn,
                .invalidValueErrorsNameTheFirstRow, .checksReservedPrefixesCaseSensitively,
                .checksReservedPrefixesOnlyOnFirstOpen:
                return 7
            case .readsFailDuringWrites, .lookupsFailDuringWrites, .writesFailWhenConcurrent, .schemaFailsDuringWrites,
                .countingReadsFailDuringWrites:
                return 8
            }
        }
    }

    /// What the store remembers besides the wrapped store's tables.
    private struct Side {
        /// The stored schema after the last open, and what that open declared.
        var stored: StoreSchema?
        var declared = StoreSchema([])
        /// Rows per table when the store was last closed.
        var rowCounts: [String: Int] = [:]
        /// Unknown columns kept from server writes, by table and id.
        var extras: [String: [[UInt8]: [String: Value]]] = [:]
        /// Per table, the columns of indexes added by a reopen and the ids of the rows already there.
        var unindexed: [String: (columns: Set<String>, ids: Set<[UInt8]>)] = [:]
        /// Per table, the columns a reopen added.
        var addedColumns: [String: Set<String>] = [:]
        /// Write transactions running now.
        var activeWrites = 0
        /// The stored schema after the first open.
        var firstStored: StoreSchema?
        /// Per table, the columns and indexes a reopen lost; tables a reopen lost.
        var lostColumns: [String: Set<String>] = [:]
        var lostIndexes: [String: Set<String>] = [:]
        var lostTables: Set<String> = []
        /// Per table and id, the indexed values an index still lists the row under (stale entries).
        var staleEntries: [String: [[UInt8]: [Item]]] = [:]
        /// The committed tables before the last write transaction, to put back when closing.
        var beforeLastWrite: [String: [Item]]?
        /// Rows answered by `lookup`, by table and id, until a local write or a delete drops them.
        var lookupCache: [String: [[UInt8]: Item]] = [:]
        /// Per table, the rows `delete(matching:)` removed, which a row counter never took off.
        var deletedByQuery: [String: Int] = [:]
        /// Per table and id, the row a close puts back: a deleted row whose delete never reached the
        /// disk, or the first version of a replaced row, which the replay of the log keeps.
        var restoreOnClose: [String: [[UInt8]: Item]] = [:]
        /// How many times the store was opened.
        var opens = 0
        /// Per table, how far the row counter that answers unfiltered counts is off the rows stored.
        var rowCountOffsets: [String: Int] = [:]
    }

    let fault: Fault
    private let inner = Locked(InMemoryStore())
    private let side = Locked(Side())
    private let writerLock = Locked(0)  // not Locked(()): ThreadSanitizer misreads the exclusive access of a zero-sized value

    init(_ fault: Fault) {
        self.fault = fault
    }

    private var store: InMemoryStore { inner.withLock { $0 } }

    var info: StoreInfo { StoreInfo(backend: "broken-\(fault)") }

    /// The name prefix the stores with a fault of reserved names reserve.
    static let reservedPrefix = "broken_"

    /// ``reservedPrefix`` for the faults of reserved names; none otherwise.
    var reservedNamePrefixes: [String] {
        fault == .checksReservedPrefixesCaseSensitively || fault == .checksReservedPrefixesOnlyOnFirstOpen
            ? [Self.reservedPrefix] : []
    }

    /// `false`, or for ``Fault/storedSchemaChangedCountsOwnReopens`` whether the stored schema
    /// differs from the one of the first open.
    func storedSchemaChanged() throws -> Bool {
        let stored = try store.schema
        guard fault == .storedSchemaChangedCountsOwnReopens else { return false }
        return side.withLock { $0.firstStored } != stored
    }

    var schema: StoreSchema {
        get throws {
            if fault == .schemaFailsDuringWrites { try failIfWriting() }
            let stored = try store.schema
            if fault == .schemaAnswersTheLastDeclaration { return side.withLock { $0.declared } }
            if fault == .readsUnsyncedTablesAsSyncedAfterReopen, side.withLock({ $0.opens > 1 }) {
                // TableSchema's initialiser adds the system columns and `synced: true` by default.
                return StoreSchema(
                    stored.tables.map {
                        $0.synced ? $0 : TableSchema($0.name, columns: $0.columns, indexes: $0.indexes)
                    })
            }
            return side.withLock { side in
                StoreSchema(
                    stored.tables.filter { !side.lostTables.contains($0.name) }.map { table in
                        let columns = side.lostColumns[table.name] ?? []
                        let indexes = side.lostIndexes[table.name] ?? []
                        guard !columns.isEmpty || !indexes.isEmpty else { return table }
                        return TableSchema(
                            table.name, columns: table.columns.filter { !columns.contains($0.name) },
                            indexes: table.indexes.filter { !indexes.contains($0.name) }, synced: table.synced)
                    })
            }
        }
    }

    /// `item` without the values of columns a reopen lost.
    private func withoutLostColumns(_ item: Item, table: String) -> Item {
        guard let lost = side.withLock({ $0.lostColumns[table] }), !lost.isEmpty else { return item }
        var item = item
        for column in lost { item.values[column] = nil }
        return item
    }

    // MARK: Open and close

    func open(schema: StoreSchema) throws {
        let store = self.store
        let previous = side.withLock { $0.stored }
        if fault == .refusesToOpenWithAnEmptySchema, schema.tables.isEmpty {
            throw OfflineSyncError(.invalidSchema, "a store must declare at least one table")
        }
        switch fault {
        case .checksReservedPrefixesCaseSensitively: try Self.rejectReservedNamesAsWritten(in: schema)
        case .checksReservedPrefixesOnlyOnFirstOpen where previous == nil:
            try schema.validate(reservedPrefixes: reservedNamePrefixes)
        default: break
        }
        var declared = schema
        if let previous, fault == .acceptsRetypingEmptyTables || fault == .acceptsRetypingTablesWithRows {
            let counts = side.withLock { $0.rowCounts }
            declared = StoreSchema(
                schema.tables.filter { table in
                    guard let old = previous.table(named: table.name) else { return true }
                    let retyped = table.columns.contains { column in
                        old.column(named: column.name).map { $0.type != column.type } ?? false
                    }
                    let hasRows = (counts[table.name] ?? 0) > 0
                    return !(retyped && hasRows == (fault == .acceptsRetypingTablesWithRows))
                })
        }
        try store.open(schema: declared)
        let stored = try store.schema
        side.withLock {
            $0.stored = stored
            $0.declared = schema
            $0.opens += 1
            if $0.firstStored == nil { $0.firstStored = stored }
        }
        if let previous { try reopened(store, previous: previous, declared: schema, stored: stored) }
    }

    /// Throws for the first table, column or index of `schema` named with ``reservedPrefix`` in
    /// the letter case it is written in (a `hasPrefix` where a case-insensitive check was meant).
    private static func rejectReservedNamesAsWritten(in schema: StoreSchema) throws {
        for table in schema.tables {
            let names =
                [("table", table.name)] + table.columns.map { ("column", $0.name) }
                + table.indexes.map { ("index", $0.name) }
            for (kind, name) in names where name.hasPrefix(reservedPrefix) {
                throw OfflineSyncError(
                    .invalidName, "\(kind) name '\(name)' starts with '\(reservedPrefix)', which this store reserves")
            }
        }
    }

    /// Bends the store after a reopen, for the faults of widening and reloading.
    private func reopened(_ store: InMemoryStore, previous: StoreSchema, declared: StoreSchema, stored: StoreSchema)
        throws
    {
        switch fault {
        case .dropsValuesOfColumnsAddedOnReopen:
            for table in declared.tables {
                guard let old = previous.table(named: table.name) else { continue }
                let added = table.columns.map(\.name).filter { old.column(named: $0) == nil }
                side.withLock { $0.addedColumns[table.name, default: []].formUnion(added) }
            }
        case .dropsRowsWhenWidening:
            for table in declared.tables {
                guard let old = previous.table(named: table.name),
                    table.columns.contains(where: { old.column(named: $0.name) == nil })
                else { continue }
                try store.delete(matching: Query(table: table.name))
            }
        case .forgetsTablesLeftOutOnReopen:
            for table in previous.tables where declared.table(named: table.name) == nil {
                try store.delete(matching: Query(table: table.name))
            }
        case .skipsIndexBackfillOnWiden:
            for table in declared.tables {
                guard let old = previous.table(named: table.name) else { continue }
                let added = table.indexes.filter { index in !old.indexes.contains { $0.name == index.name } }
                guard !added.isEmpty else { continue }
                let ids = try store.read(Query(table: table.name, selection: [])).items.map { Array($0.id.utf8) }
                side.withLock { $0.unindexed[table.name] = (Set(added.flatMap(\.columns)), Set(ids)) }
            }
        case .dropsColumnsLeftOutOfAReopenedTable, .dropsIndexesLeftOutOfAReopenedTable:
            for table in declared.tables {
                guard let old = previous.table(named: table.name) else { continue }
                let columns = old.columns.map(\.name).filter { table.column(named: $0) == nil }
                let indexes = old.indexes.map(\.name).filter { name in !table.indexes.contains { $0.name == name } }
                side.withLock { side in
                    side.lostColumns[table.name, default: []].subtract(table.columns.map(\.name))
                    side.lostIndexes[table.name, default: []].subtract(table.indexes.map(\.name))
                    if fault == .dropsColumnsLeftOutOfAReopenedTable {
                        side.lostColumns[table.name, default: []].formUnion(columns)
                    } else {
                        side.lostIndexes[table.name, default: []].formUnion(indexes)
                    }
                }
            }
        case .forgetsWideningAtTheNextReopen:
            // What an earlier reopen added is lost unless this open declares it again.
            guard let first = side.withLock({ $0.firstStored }) else { break }
            for table in previous.tables {
                let again = declared.table(named: table.name)
                guard let original = first.table(named: table.name) else {
                    if again == nil {
                        try store.delete(matching: Query(table: table.name))
                        side.withLock { _ = $0.lostTables.insert(table.name) }
                    }
                    continue
                }
                let columns = table.columns.map(\.name).filter {
                    original.column(named: $0) == nil && again?.column(named: $0) == nil
                }
                let indexes = table.indexes.map(\.name).filter { name in
                    !original.indexes.contains { $0.name == name }
                        && !(again?.indexes.contains { $0.name == name } ?? false)
                }
                side.withLock { side in
                    side.lostColumns[table.name, default: []].formUnion(columns)
                    side.lostIndexes[table.name, default: []].formUnion(indexes)
                }
            }
        case .reloadDropsNegativeZeroSign:
            for table in stored.tables {
                let rows = try store.read(Query(table: table.name)).items
                try store.upsert(rows.map(withoutNegativeZero), into: table.name, origin: .server)
            }
        default:
            break
        }
    }

    func close() throws {
        if fault == .closeDoesNothing { return }
        side.withLock { $0.lookupCache = [:] }
        let store = self.store
        let restore = side.withLock { side in
            defer { side.restoreOnClose = [:] }
            return side.restoreOnClose
        }
        if !restore.isEmpty {
            try store.write { transaction in
                for (table, rows) in restore {
                    for row in rows.values {
                        // A delete left out of the log brings an absent row back; a replay that
                        // keeps the first record of an id puts the first version over a present one.
                        let present = try transaction.lookup(table: table, id: row.id) != nil
                        if present == (fault == .reopenKeepsTheFirstVersionOfReplacedRows) {
                            try transaction.upsert([row], into: table, origin: .server)
                        }
                    }
                }
            }
        }
        if fault == .losesTheLastTransactionOnClose, let before = side.withLock({ $0.beforeLastWrite }) {
            try store.write { transaction in
                for (table, rows) in before {
                    try transaction.delete(matching: Query(table: table))
                    try transaction.upsert(rows, into: table, origin: .server)
                }
            }
            side.withLock { $0.beforeLastWrite = nil }
        }
        if let stored = try? store.schema {
            let counts = stored.tables.map { ($0.name, (try? store.count($0.name)) ?? 0) }
            side.withLock { $0.rowCounts = Dictionary(counts, uniquingKeysWith: { $1 }) }
        }
        try inner.withLock { store in
            try store.close()
            if fault == .losesSchemaOnReopen { store = InMemoryStore() }
        }
        if fault == .losesSchemaOnReopen { side.withLock { $0.stored = nil } }
    }

    // MARK: Reads

    func read(_ query: Query) throws -> QueryResult {
        if fault == .readsFailDuringWrites { try failIfWriting() }
        if fault == .countingReadsFailDuringWrites, query.includeTotalCount { try failIfWriting() }
        let store = self.store
        let schema = try store.schema
        if fault == .readsUndeclaredTablesAsEmpty, schema.table(named: query.table) == nil {
            return QueryResult(items: [], totalCount: query.includeTotalCount ? 0 : nil)
        }
        var result = try reportingErrors {
            try distortedRead(query, schema: schema, inTransaction: false, read: store.read)
        }
        if fault == .readsDropNegativeZeroSign { result.items = result.items.map(withoutNegativeZero) }
        if fault == .readsCutValuesPast64KiB { result.items = result.items.map(Self.cutPast64KiB) }
        result.items = result.items.map { withoutLostColumns($0, table: query.table) }
        return result
    }

    func lookup(table: String, id: String) throws -> Item? {
        if fault == .lookupsFailDuringWrites { try failIfWriting() }
        let store = self.store
        if fault == .closedStoreLookupsAnswerNil, (try? store.schema) == nil { return nil }
        let id = fault == .truncatesIdsAtNUL ? Self.beforeNUL(id) : id
        if fault == .looksUpUndeclaredTablesAsMissing, try store.schema.table(named: table) == nil { return nil }
        if fault == .lookupsAnswerStaleRowsAfterServerUpserts,
            let cached = side.withLock({ $0.lookupCache[table]?[Array(id.utf8)] })
        {
            return cached
        }
        var found = try reportingErrors { try store.lookup(table: table, id: id) }
        if fault == .lookupsAnswerStaleRowsAfterServerUpserts, let found {
            side.withLock { $0.lookupCache[table, default: [:]][Array(id.utf8)] = found }
        }
        switch fault {
        case .lookupOfMissingIdThrows where found == nil:
            throw OfflineSyncError(.invalidOperation, "table '\(table)' has no row with id '\(id)'")
        case .looksUpIdsCaseInsensitively where found == nil:
            found = try store.read(Query(table: table)).items.first { $0.id.lowercased() == id.lowercased() }
        case .lookupsDropNegativeZeroSign:
            found = found.map(withoutNegativeZero)
        case .looksUpIdsOfTablesWhoseNamesExtendTheTable where found == nil:
            // Keys are the table name and the id without a separator: table 'note' and id 'sX'
            // make the key of table 'notes' and id 'X'.
            for other in try store.schema.tables where other.name.utf8.count > table.utf8.count {
                guard other.name.utf8.starts(with: table.utf8) else { continue }
                let suffix = other.name.utf8.dropFirst(table.utf8.count)
                guard id.utf8.starts(with: suffix) else { continue }
                let rest = String(decoding: id.utf8.dropFirst(suffix.count), as: UTF8.self)
                guard !rest.isEmpty, let row = try store.lookup(table: other.name, id: rest),
                    let declared = try store.schema.table(named: table)
                else { continue }
                found = Self.asRow(of: declared, row, from: other, id: id)
                break
            }
        case .looksUpMissingIdsInOtherTables where found == nil:
            for other in try store.schema.tables where other.name != table {
                if let row = try store.lookup(table: other.name, id: id) {
                    found = row
                    break
                }
            }
        case .keepsUnknownServerColumns:
            if var item = found, let extra = side.withLock({ $0.extras[table]?[Array(id.utf8)] }) {
                item.values.merge(extra) { $1 }
                found = item
            }
        default:
            break
        }
        return found.map { withoutLostColumns($0, table: table) }
    }

    /// Answers `query` through `read`, bending the query rule this store breaks.
    fileprivate func distortedRead(
        _ query: Query, schema: StoreSchema, inTransaction: Bool, read: (Query) throws -> QueryResult
    ) throws -> QueryResult {
        var query = query
        let table = try schema.requireTable(query.table)
        if fault == .skipsQueryValidation, (try? query.validate(against: table)) == nil {
            return QueryResult(items: [], totalCount: query.includeTotalCount ? 0 : nil)
        }
        if BentEvaluator.faults.contains(fault) {
            let rows = try read(Query(table: query.table)).items
            return try BentEvaluator(fault: fault, query: query, schema: table).run(over: rows)
        }
        if fault == .readsRowsOfTablesWhoseNamesExtendTheTable {
            // A prefix scan over keys made of the table name and the id without a separator also
            // walks the keys of every table whose name starts with this one's.
            let longer = schema.tables.filter {
                $0.name.utf8.count > table.name.utf8.count && $0.name.utf8.starts(with: table.name.utf8)
            }
            if !longer.isEmpty {
                var rows = try read(Query(table: query.table)).items
                for other in longer {
                    let suffix = String(decoding: other.name.utf8.dropFirst(table.name.utf8.count), as: UTF8.self)
                    rows += try read(Query(table: other.name)).items.map {
                        Self.asRow(of: table, $0, from: other, id: suffix + $0.id)
                    }
                }
                return try QueryEvaluator(query: query, schema: table).run(over: rows)
            }
        }
        if fault == .appliesSkipBeforeTheFilter, query.skip > 0, query.filter != nil {
            // An index walk that skips its first entries before it checks the filter.
            let ordered = try read(Query(table: query.table, orderBy: query.orderBy)).items
            var rest = query
            rest.skip = 0
            rest.includeTotalCount = false
            var result = try QueryEvaluator(query: rest, schema: table).run(over: Array(ordered.dropFirst(query.skip)))
            if query.includeTotalCount {
                result.totalCount = try read(
                    Query(table: query.table, filter: query.filter, top: 0, includeTotalCount: true)
                ).totalCount
            }
            return result
        }
        if fault == .countsAtTopZeroIgnoreTheFilter, query.top == 0, query.includeTotalCount {
            // A shortcut for count(): top 0 answers the table's row counter.
            let total = try read(Query(table: query.table, top: 0, includeTotalCount: true)).totalCount
            return QueryResult(items: [], totalCount: total)
        }
        if query.filter != nil, let stale = side.withLock({ $0.staleEntries[query.table] }), !stale.isEmpty {
            let rows = try read(Query(table: query.table)).items
            return try BentEvaluator(fault: nil, query: query, schema: table, staleEntries: stale).run(over: rows)
        }
        if fault == .skipPastTheEndAnswersTheLastPage, query.skip > 0, query.top != 0 {
            // An "offset past the end" special case that clamps to the last page.
            let total =
                try read(Query(table: query.table, filter: query.filter, top: 0, includeTotalCount: true))
                .totalCount ?? 0
            if total > 0, query.skip >= total {
                let wanted = query.top ?? 1
                let lastPage = try read(
                    Query(
                        table: query.table, filter: query.filter, orderBy: query.orderBy,
                        skip: max(0, total - min(wanted, total)), top: query.top, selection: query.selection))
                return QueryResult(items: lastPage.items, totalCount: query.includeTotalCount ? total : nil)
            }
        }
        switch fault {
        case .transactionReadsIgnoreSelection where inTransaction: query.selection = nil
        case .readsIgnoreSelectionOutsideTransactions where !inTransaction: query.selection = nil
        case .selectionKeepsSystemColumns where table.synced:
            if let selection = query.selection {
                query.selection = selection + SystemProperty.allCases.map(\.rawValue).filter { !selection.contains($0) }
            }
        case .selectionLeavesOutSystemColumns where table.synced:
            query.selection = query.selection.map { $0.filter { SystemProperty(rawValue: $0) == nil } }
        case .ignoresTop: query.top = nil
        case .transactionReadsIgnoreTop where inTransaction: query.top = nil
        case .returnsOneRowTooManyForTop: query.top = query.top.map { $0 > 0 && $0 < Int.max ? $0 + 1 : $0 }
        case .ignoresSkipWithoutTop where query.top == nil: query.skip = 0
        case .appliesTopBeforeSkip where query.top != nil && query.skip > 0:
            // LIMIT top, then OFFSET skip within those rows.
            query.top = query.top.map { $0 > query.skip ? $0 - query.skip : 0 }
        case .ordersByUnselectedColumnsAsNull:
            if let selection = query.selection {
                query.orderBy = query.orderBy.filter { $0.column == "id" || selection.contains($0.column) }
            }
        case .capsTopAt1000: query.top = query.top.map { min($0, 1_000) }
        case .capsSkipAt1000: query.skip = min(query.skip, 1_000)
        case .truncatesLongInLists: query.filter = query.filter.map { rewrite($0, lists: { Array($0.prefix(999)) }) }
        case .failsOnInListsPast32766:
            if let filter = query.filter, longestList(filter) > 32_766 {
                throw OfflineSyncError(.storage, "too many SQL variables in a query on '\(query.table)'")
            }
        case .ordersIdsAscendingAlways:
            query.orderBy = query.orderBy.map { $0.column == "id" ? SortKey("id") : $0 }
        case .comparesStringsCaseInsensitively:
            query.filter = query.filter.map { foldCase($0, in: table) }
        case .indexedFiltersComparePrefixOnly:
            let indexed = Set(table.indexes.compactMap(\.columns.first))
            query.filter = query.filter.map { prefixOnly($0, indexed: indexed) }
        case .ordersNullsLast where !query.orderBy.isEmpty:
            let evaluator = try QueryEvaluator(query: query, schema: table)
            var matching = try read(Query(table: query.table, filter: query.filter)).items
            matching.sort { nullsLastPrecedes($0, $1, query.orderBy) }
            let page = matching.dropFirst(query.skip).prefix(query.top ?? matching.count).map(evaluator.select)
            return QueryResult(items: Array(page), totalCount: query.includeTotalCount ? matching.count : nil)
        case .skipsIndexBackfillOnWiden:
            guard let unindexed = side.withLock({ $0.unindexed[query.table] }), let filter = query.filter,
                !unindexed.columns.isDisjoint(with: columns(of: filter))
            else { break }
            var result = try read(query)
            result.items.removeAll { unindexed.ids.contains(Array($0.id.utf8)) }
            return result
        default:
            break
        }
        var result = try read(query)
        if fault == .totalCountIgnoresFilter, query.includeTotalCount {
            result.totalCount = try read(Query(table: query.table, top: 0, includeTotalCount: true)).totalCount
        }
        if fault == .totalCountSubtractsSkip, let total = result.totalCount {
            // COUNT(*) over the statement with its OFFSET.
            result.totalCount = max(0, total - query.skip)
        }
        if fault == .totalCountCountsOnlyThePage, result.totalCount != nil, let top = query.top, top > 0 {
            // COUNT(*) over the statement with its LIMIT and OFFSET (count() itself asks top 0).
            result.totalCount = result.items.count
        }
        if query.filter == nil, let total = result.totalCount,
            let offset = side.withLock({ $0.rowCountOffsets[query.table] })
        {
            // A row counter, off by what the store's fault added or took away.
            result.totalCount = max(0, total + offset)
        }
        if fault == .unfilteredCountIgnoresDeletesByQuery, query.filter == nil, let total = result.totalCount {
            result.totalCount = total + side.withLock { $0.deletedByQuery[query.table] ?? 0 }
        }
        if fault == .selectionDropsTheId, let selection = query.selection, !selection.contains("id") {
            result.items = result.items.map { Item(id: "", values: $0.values) }
        }
        return result
    }

    // MARK: Writes

    func write<Result>(_ body: (any StoreTransaction) throws -> Result) throws -> Result {
        try side.withLock { side in
            if fault == .writesFailWhenConcurrent, side.activeWrites > 0 {
                throw OfflineSyncError(.storage, "the database is busy: another write transaction is running")
            }
            side.activeWrites += 1
        }
        defer { side.withLock { $0.activeWrites -= 1 } }
        let store = self.store
        let schema = try store.schema
        switch fault {
        case .commitsPartialTransactions:
            return try body(Transaction(store: self, schema: schema, target: .autocommit(store)))
        case .showsUncommittedWrites:
            return try writerLock.withLock { _ in
                let transaction = Transaction(store: self, schema: schema, target: .writeThrough(store))
                do {
                    return try body(transaction)
                } catch {
                    try transaction.undoWriteThrough()
                    throw error
                }
            }
        case .interleavesTransactions:
            return try writeOnACopy(store, schema: schema, body)
        default:
            break
        }
        let needsSnapshot: Set<Fault> = [
            .transactionReadsIgnoreOwnWrites, .transactionLookupsIgnoreOwnWrites,
            .ownWritesVisibleOnlyInTheLastWrittenTable, .deleteByQueryInTransactionIgnoresOwnWrites,
            .insertNewIgnoresOwnWrites, .losesTheLastTransactionOnClose, .transactionCountsIgnoreOwnWrites,
        ]
        let snapshot = needsSnapshot.contains(fault) ? try Self.snapshot(of: store, schema: schema) : [:]
        var replay: [Transaction.Operation] = []
        var upserted: [(table: String, item: Item)] = []
        var restore: [String: [[UInt8]: Item]] = [:]
        var countOffsets: [String: Int] = [:]
        var silentlyRolledBack: Result?
        do {
            let result = try store.write { inner in
                let transaction = Transaction(
                    store: self, schema: schema, target: .transaction(inner), snapshot: snapshot)
                defer {
                    replay = transaction.operationsKeptOnRollback()
                    upserted = transaction.upserted
                    restore = transaction.restoreOnClose
                    countOffsets = transaction.rowCountOffsets
                }
                let result = try body(transaction)
                if fault == .rollsBackWhenTheBodyCaughtAnError, transaction.anOperationFailed {
                    silentlyRolledBack = result
                    throw SilentRollback()
                }
                return result
            }
            if fault == .losesTheLastTransactionOnClose { side.withLock { $0.beforeLastWrite = snapshot } }
            if !countOffsets.isEmpty {
                side.withLock { side in side.rowCountOffsets.merge(countOffsets) { $0 + $1 } }
            }
            if !restore.isEmpty {
                side.withLock { side in
                    for (table, rows) in restore {
                        side.restoreOnClose[table, default: [:]].merge(rows) { first, _ in first }
                    }
                }
            }
            return result
        } catch {
            if error is SilentRollback, let silentlyRolledBack { return silentlyRolledBack }
            if fault == .rollbackKeepsIndexEntries { keepStaleEntries(upserted, schema: schema) }
            if !replay.isEmpty {
                try store.write { inner in
                    for operation in replay { try operation.apply(to: inner) }
                }
            }
            if fault == .rethrowsAWrappedError, !(error is OfflineSyncError) {
                throw OfflineSyncError(.storage, "the transaction failed: \(error)")
            }
            throw error
        }
    }

    /// A transaction without a writer lock: it copies the committed tables, runs on the copy and
    /// then replaces the tables it wrote with the copy's, so a concurrent transaction's writes
    /// between the copy and the commit are lost.
    private func writeOnACopy<Result>(
        _ store: InMemoryStore, schema: StoreSchema, _ body: (any StoreTransaction) throws -> Result
    ) throws -> Result {
        let snapshot = try Self.snapshot(of: store, schema: schema)
        let copy = InMemoryStore()
        try copy.open(schema: schema)
        try copy.write { transaction in
            for (table, rows) in snapshot { try transaction.upsert(rows, into: table, origin: .server) }
        }
        var written: Set<String> = []
        let result = try copy.write { inner in
            let transaction = Transaction(store: self, schema: schema, target: .transaction(inner))
            defer { written = transaction.writtenTables }
            return try body(transaction)
        }
        let tables = try written.map { ($0, try copy.read(Query(table: $0)).items) }
        try store.write { transaction in
            for (table, rows) in tables {
                try transaction.delete(matching: Query(table: table))
                try transaction.upsert(rows, into: table, origin: .server)
            }
        }
        return result
    }

    /// Every row of every table, as committed.
    fileprivate static func snapshot(of store: InMemoryStore, schema: StoreSchema) throws -> [String: [Item]] {
        var rows: [String: [Item]] = [:]
        for table in schema.tables { rows[table.name] = try store.read(Query(table: table.name)).items }
        return rows
    }

    /// The error that rolls back a transaction whose body returned (``Fault/rollsBackWhenTheBodyCaughtAnError``).
    private struct SilentRollback: Error {}

    /// Notes `rows` (written and then rolled back, or deleted) as still listed by their indexes.
    fileprivate func keepStaleEntries(_ rows: [(table: String, item: Item)], schema: StoreSchema) {
        side.withLock { side in
            for (table, item) in rows where !(schema.table(named: table)?.indexes.isEmpty ?? true) {
                side.staleEntries[table, default: [:]][Array(item.id.utf8), default: []].append(item)
            }
        }
    }

    /// Drops cached lookups of `ids` (every row of `table` when `nil`).
    fileprivate func forgetCachedRows(_ table: String, ids: [String]?) {
        side.withLock { side in
            guard let ids else { return side.lookupCache[table] = nil }
            for id in ids { side.lookupCache[table]?[Array(id.utf8)] = nil }
        }
    }

    fileprivate func countDeletedByQuery(_ count: Int, in table: String) {
        side.withLock { $0.deletedByQuery[table, default: 0] += count }
    }

    private func failIfWriting() throws {
        if side.withLock({ $0.activeWrites > 0 }) {
            throw OfflineSyncError(.storage, "the database is locked by a write transaction")
        }
    }

    /// Runs `body`, bending the errors it throws the way this store's fault says.
    fileprivate func reportingErrors<T>(_ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let error as OfflineSyncError {
            switch fault {
            case .reportsUnknownTablesAsStorageErrors where error.code == .unknownTable:
                throw OfflineSyncError(.storage, error.message)
            case .errorsOmitTheColumn where error.code == .invalidValue:
                throw OfflineSyncError(.invalidValue, "a value is invalid")
            default:
                throw error
            }
        }
    }

    fileprivate func rememberExtras(_ items: [Item], table: TableSchema) {
        side.withLock { side in
            for item in items {
                let extra = item.values.filter { !$0.value.isNull && table.column(named: $0.key) == nil }
                side.extras[table.name, default: [:]][Array(item.id.utf8)] = extra.isEmpty ? nil : extra
            }
        }
    }

    // MARK: Distortions

    /// Items as this store writes them into `table`.
    fileprivate func distorted(_ items: [Item], table: TableSchema, origin: WriteOrigin) -> [Item] {
        let indexed = Set(table.indexes.flatMap(\.columns))
        let added = side.withLock { $0.addedColumns[table.name] ?? [] }
        return items.map { item in
            var item = item
            for column in added { item.values[column] = nil }
            if fault == .dropsValuesPastTheSixtyFourthColumn {
                // A record whose null bitmap is one UInt64: a column past the 64th reads as null.
                for column in table.columns.dropFirst(64) { item.values[column.name] = nil }
            }
            if fault == .trimsTrailingSpacesOfIds {
                let trimmed = String(item.id.reversed().drop { $0 == " " }.reversed())
                if !trimmed.isEmpty { item.id = trimmed }
            }
            if fault == .convertsOffsetDatesAsUTC {
                for column in table.columns where column.type == .date {
                    guard case .string(let text)? = item.values[column.name], let time = text.firstIndex(of: "T"),
                        let offset = text[time...].firstIndex(where: { $0 == "+" || $0 == "-" })
                    else { continue }
                    if let date = Timestamp(iso8601: text[..<offset] + "Z") { item.values[column.name] = .date(date) }
                }
            }
            if fault == .truncatesConvertedDatesFromServer, origin == .server {
                for column in table.columns where column.type == .date {
                    if case .string(let text)? = item.values[column.name], let date = Timestamp(iso8601: text) {
                        item.values[column.name] = .date(Self.truncatedToSeconds(date))
                    }
                }
            }
            for (column, value) in item.values {
                item.values[column] = distorted(
                    value, indexed: indexed.contains(column), type: table.column(named: column)?.type)
            }
            return item
        }
    }

    private func distorted(_ value: Value, indexed: Bool, type: ColumnType?) -> Value {
        switch (fault, value) {
        case (.dropsNegativeZeroSign, .double(let number)) where number == 0: return .double(0)
        case (.stripsLeadingByteOrderMark, .string(let text)) where text.hasPrefix("\u{FEFF}"):
            return .string(String(text.unicodeScalars.dropFirst()))
        case (.truncatesIndexedStringsTo255Bytes, .string(let text)) where indexed && text.utf8.count > 255:
            var cut = ""
            for scalar in text.unicodeScalars where cut.utf8.count + String(scalar).utf8.count <= 255 {
                cut.unicodeScalars.append(scalar)
            }
            return .string(cut)
        case (.replacesNonBMPCharactersInIndexedColumns, .string(let text)) where indexed:
            return .string(
                String(String.UnicodeScalarView(text.unicodeScalars.map { $0.value > 0xFFFF ? "\u{FFFD}" : $0 })))
        case (.canonicalisesJSON, .json(let text)): return .json(BentEvaluator.withoutWhitespace(text))
        case (.storesMalformedJSONAsEmptyArray, .json(let text)):
            let parsed = try? JSONSerialization.jsonObject(with: Data(text.utf8))
            return parsed is [Any] || parsed is [String: Any] ? value : .json("[]")
        case (.unescapesSolidusInJSON, .json(let text)): return .json(text.replacingOccurrences(of: "\\/", with: "/"))
        case (.convertsLoneCarriageReturns, .string(let text)):
            let scalars = Array(text.unicodeScalars)
            var result = String.UnicodeScalarView()
            for (position, scalar) in scalars.enumerated() {
                let lone = scalar == "\r" && (position + 1 == scalars.count || scalars[position + 1] != "\n")
                result.append(lone ? "\n" : scalar)
            }
            return .string(String(result))
        case (.truncatesDateMilliseconds, .date(let date)):
            let milliseconds = date.millisecondsSince1970
            return .date(Timestamp(millisecondsSince1970: milliseconds - ((milliseconds % 1000) + 1000) % 1000))
        case (.truncatesConvertedDates, .string(let text)) where type == .date:
            guard let date = Timestamp(iso8601: text) else { return value }
            let milliseconds = date.millisecondsSince1970
            return .date(Timestamp(millisecondsSince1970: milliseconds - ((milliseconds % 1000) + 1000) % 1000))
        case (.normalisesUnicode, .string(let text)): return .string(text.precomposedStringWithCanonicalMapping)
        case (.storesEmptyStringsAsNull, .string(let text)) where text.isEmpty: return .null
        case (.flushesSubnormalDoublesToZero, .double(let number)) where number.isSubnormal:
            return .double(number.sign == .minus ? -0.0 : 0.0)
        case (.trimsStrings, .string(let text)): return .string(text.trimmingCharacters(in: .whitespacesAndNewlines))
        case (.roundsIntegersThroughDouble, .int(let number)):
            let rounded = Double(number)
            return .int(rounded >= 9.2e18 ? .max : rounded <= -9.2e18 ? .min : Int64(rounded))
        default: return value
        }
    }

    /// `item` with its strings and JSON texts cut to at most 65,535 UTF-8 bytes, at a scalar boundary.
    private static func cutPast64KiB(_ item: Item) -> Item {
        func cut(_ text: String) -> String {
            guard text.utf8.count > 65_535 else { return text }
            var kept = String.UnicodeScalarView()
            var bytes = 0
            for scalar in text.unicodeScalars {
                bytes += String(scalar).utf8.count
                if bytes > 65_535 { break }
                kept.append(scalar)
            }
            return String(kept)
        }
        return Item(
            id: item.id,
            values: item.values.mapValues { value in
                switch value {
                case .string(let text): return .string(cut(text))
                case .json(let text): return .json(cut(text))
                default: return value
                }
            })
    }

    /// `id` up to its first U+0000, as a C string reads it.
    fileprivate static func beforeNUL(_ id: String) -> String {
        String(decoding: id.utf8.prefix { $0 != 0 }, as: UTF8.self)
    }

    /// `item` without the values of its declared columns that the core refuses (they read as null).
    fileprivate static func withoutInvalidValues(_ item: Item, table: TableSchema, origin: WriteOrigin) -> Item {
        var item = item
        for (column, value) in item.values where table.column(named: column) != nil {
            if (try? table.normalize(Item(id: item.id, values: [column: value]), origin: origin)) == nil {
                item.values[column] = nil
            }
        }
        return item
    }

    private static func truncatedToSeconds(_ date: Timestamp) -> Timestamp {
        let milliseconds = date.millisecondsSince1970
        return Timestamp(millisecondsSince1970: milliseconds - ((milliseconds % 1000) + 1000) % 1000)
    }

    /// `row` of table `other` read as a row of `table` under `id`: the values of the columns both
    /// tables declare with the same type.
    fileprivate static func asRow(of table: TableSchema, _ row: Item, from other: TableSchema, id: String) -> Item {
        Item(
            id: id,
            values: row.values.filter { column, _ in
                table.column(named: column).map { $0.type == other.column(named: column)?.type } ?? false
            })
    }

    fileprivate func withoutNegativeZero(_ item: Item) -> Item {
        Item(
            id: item.id,
            values: item.values.mapValues { value in
                if case .double(let number) = value, number == 0 { return .double(0) }
                return value
            })
    }

    private func nullsLastPrecedes(_ lhs: Item, _ rhs: Item, _ keys: [SortKey]) -> Bool {
        for key in keys {
            let left = lhs[key.column]
            let right = rhs[key.column]
            if left.isNull != right.isNull { return right.isNull }
            let order = ValueSemantics.compare(left, right)
            if order != 0 { return key.descending ? order > 0 : order < 0 }
        }
        return ValueSemantics.compareBytes(lhs.id, rhs.id) < 0
    }

    /// `expression` with every string column read through `tolower` and every string literal in
    /// lower case, so comparisons ignore ASCII letter case.
    private func foldCase(_ expression: FilterExpression, in table: TableSchema) -> FilterExpression {
        func fold(_ value: Value) -> Value {
            if case .string(let text) = value { return .string(text.lowercased()) }
            return value
        }
        return transform(expression) { node in
            switch node {
            case .literal(let value): return .literal(fold(value))
            case .column(let name):
                let isString = name == "id" || table.column(named: name)?.type == .string
                return isString ? .function(.toLower, [node]) : node
            case .isIn(let operand, let values): return .isIn(foldCase(operand, in: table), values.map(fold))
            default: return nil
            }
        }
    }

    /// `expression` whose `eq` comparisons of an indexed string column with a long string compare
    /// only the first 255 bytes, as an index of cut keys without a recheck would.
    private func prefixOnly(_ expression: FilterExpression, indexed: Set<String>) -> FilterExpression {
        transform(expression) { node in
            guard case .comparison(.column(let column), .eq, .literal(.string(let text))) = node,
                indexed.contains(column), text.utf8.count > 255
            else { return nil }
            let prefix = String(decoding: text.utf8.prefix(255), as: UTF8.self)
            return .function(.startsWith, [.column(column), .literal(.string(prefix))])
        }
    }

    fileprivate func rewrite(_ expression: FilterExpression, lists: @escaping ([Value]) -> [Value]) -> FilterExpression
    {
        transform(expression) { node in
            guard case .isIn(let operand, let values) = node else { return nil }
            return .isIn(operand, lists(values))
        }
    }

    /// `expression` rebuilt bottom-up, each node replaced by what `replace` answers (or kept on `nil`).
    private func transform(_ expression: FilterExpression, _ replace: (FilterExpression) -> FilterExpression?)
        -> FilterExpression
    {
        if let replaced = replace(expression) { return replaced }
        func again(_ node: FilterExpression) -> FilterExpression { transform(node, replace) }
        switch expression {
        case .literal, .column: return expression
        case .not(let operand): return .not(again(operand))
        case .and(let lhs, let rhs): return .and(again(lhs), again(rhs))
        case .or(let lhs, let rhs): return .or(again(lhs), again(rhs))
        case .comparison(let lhs, let op, let rhs): return .comparison(again(lhs), op, again(rhs))
        case .isIn(let operand, let values): return .isIn(again(operand), values)
        case .function(let function, let arguments): return .function(function, arguments.map(again))
        case .arithmetic(let lhs, let op, let rhs): return .arithmetic(again(lhs), op, again(rhs))
        case .negate(let operand): return .negate(again(operand))
        }
    }

    private func longestList(_ expression: FilterExpression) -> Int {
        switch expression {
        case .isIn(let operand, let values): return max(values.count, longestList(operand))
        case .not(let operand): return longestList(operand)
        case .and(let lhs, let rhs), .or(let lhs, let rhs), .comparison(let lhs, _, let rhs):
            return max(longestList(lhs), longestList(rhs))
        case .function(_, let arguments): return arguments.map(longestList).max() ?? 0
        case .arithmetic(let lhs, _, let rhs): return max(longestList(lhs), longestList(rhs))
        case .negate(let operand): return longestList(operand)
        case .literal, .column: return 0
        }
    }

    fileprivate func columns(of expression: FilterExpression) -> Set<String> {
        switch expression {
        case .column(let name): return [name]
        case .literal: return []
        case .not(let operand), .isIn(let operand, _): return columns(of: operand)
        case .and(let lhs, let rhs), .or(let lhs, let rhs), .comparison(let lhs, _, let rhs):
            return columns(of: lhs).union(columns(of: rhs))
        case .function(_, let arguments): return arguments.reduce(into: []) { $0.formUnion(columns(of: $1)) }
        case .arithmetic(let lhs, _, let rhs): return columns(of: lhs).union(columns(of: rhs))
        case .negate(let operand): return columns(of: operand)
        }
    }

    // MARK: The transaction

    /// The transaction handed to `write`'s body: the wrapped store's, bent by the fault.
    private final class Transaction: StoreTransaction {
        enum Target {
            /// The wrapped store's transaction.
            case transaction(any StoreTransaction)
            /// Every operation commits on its own.
            case autocommit(InMemoryStore)
            /// Every operation commits on its own, undone table by table when the body throws.
            case writeThrough(InMemoryStore)
        }

        /// A write, to apply again after a rollback.
        enum Operation {
            case upsert([Item], String, WriteOrigin)
            case delete([String], String)

            var table: String {
                switch self {
                case .upsert(_, let table, _), .delete(_, let table): table
                }
            }

            func apply(to transaction: any StoreTransaction) throws {
                switch self {
                case .upsert(let items, let table, let origin):
                    try transaction.upsert(items, into: table, origin: origin)
                case .delete(let ids, let table): try transaction.delete(ids: ids, from: table)
                }
            }
        }

        let store: BrokenStore
        let schema: StoreSchema
        let target: Target
        let snapshot: [String: [Item]]
        private(set) var writtenTables: Set<String> = []
        private var lastWrittenTable: String?
        private var operations: [Operation] = []
        private var itemsAsWritten: [String: [[UInt8]: Item]] = [:]
        private var tablesBeforeWriteThrough: [String: [Item]] = [:]
        /// The rows this transaction upserted, normalized, by table.
        private(set) var upserted: [(table: String, item: Item)] = []
        /// The rows this transaction deleted, as they were, by table.
        private var deletedRows: [String: [Item]] = [:]
        /// `true` once an operation threw (whether or not the body caught it).
        private(set) var anOperationFailed = false
        /// Rows a close puts back if this transaction commits (see `Side.restoreOnClose`).
        private(set) var restoreOnClose: [String: [[UInt8]: Item]] = [:]
        /// What this transaction puts off the row counters if it commits (see `Side.rowCountOffsets`).
        private(set) var rowCountOffsets: [String: Int] = [:]

        /// Notes `row` of `table` for the close to put back, unless an earlier version is noted.
        private func restoreOnClose(_ row: Item, in table: String) {
            let key = Array(row.id.utf8)
            if restoreOnClose[table]?[key] == nil { restoreOnClose[table, default: [:]][key] = row }
        }

        init(store: BrokenStore, schema: StoreSchema, target: Target, snapshot: [String: [Item]] = [:]) {
            self.store = store
            self.schema = schema
            self.target = target
            self.snapshot = snapshot
        }

        private var fault: Fault { store.fault }

        private func perform<T>(_ table: String, _ operation: (any StoreTransaction) throws -> T) throws -> T {
            do {
                return try performUnmarked(table, operation)
            } catch {
                anOperationFailed = true
                throw error
            }
        }

        private func performUnmarked<T>(_ table: String, _ operation: (any StoreTransaction) throws -> T) throws -> T {
            try store.reportingErrors {
                switch target {
                case .transaction(let transaction): return try operation(transaction)
                case .autocommit(let inner): return try inner.write(operation)
                case .writeThrough(let inner):
                    if tablesBeforeWriteThrough[table] == nil, schema.table(named: table) != nil {
                        tablesBeforeWriteThrough[table] = try inner.read(Query(table: table)).items
                    }
                    return try inner.write(operation)
                }
            }
        }

        /// Puts back the tables a write-through transaction changed.
        func undoWriteThrough() throws {
            guard case .writeThrough(let inner) = target else { return }
            try inner.write { transaction in
                for (table, rows) in tablesBeforeWriteThrough {
                    try transaction.delete(matching: Query(table: table))
                    try transaction.upsert(rows, into: table, origin: .server)
                }
            }
        }

        /// The operations that this store's fault keeps although the transaction rolled back.
        func operationsKeptOnRollback() -> [Operation] {
            switch fault {
            case .rollbackKeepsDeletesByIds, .rollbackKeepsDeletesByQuery, .rollbackKeepsServerUpserts,
                .rollbackKeepsInsertNewRows:
                return operations
            case .rollbackRestoresOnlyTheLastWrittenTable:
                return operations.filter { $0.table != lastWrittenTable }
            default:
                return []
            }
        }

        private func wrote(_ table: String) {
            writtenTables.insert(table)
            lastWrittenTable = table
        }

        private func isUndeclared(_ table: String) -> Bool { schema.table(named: table) == nil }

        /// `true` when this read must answer from the committed state.
        private func readsCommitted(_ table: String) -> Bool {
            switch fault {
            case .transactionReadsIgnoreOwnWrites: return true
            case .ownWritesVisibleOnlyInTheLastWrittenTable: return table != lastWrittenTable
            default: return false
            }
        }

        func read(_ query: Query) throws -> QueryResult {
            try withQueryErrorsBent(query.table) { try bentRead(query) }
        }

        /// Runs `body`, dropping the column from its query errors for ``Fault/transactionQueryErrorsOmitTheColumn``.
        private func withQueryErrorsBent<T>(_ table: String, _ body: () throws -> T) throws -> T {
            do {
                return try body()
            } catch let error as OfflineSyncError
                where fault == .transactionQueryErrorsOmitTheColumn
                && (error.code == .unknownColumn || error.code == .invalidQuery)
            {
                throw OfflineSyncError(error.code, "a query on table '\(table)' is invalid")
            }
        }

        /// Rows this transaction deleted that a filtered read still finds
        /// (``Fault/filteredTransactionReadsMissOwnDeletes``).
        private func withOwnDeletes(_ query: Query, _ result: QueryResult) throws -> QueryResult {
            guard fault == .filteredTransactionReadsMissOwnDeletes, query.filter != nil,
                let deleted = deletedRows[query.table], !deleted.isEmpty
            else { return result }
            let current = try perform(query.table) { try $0.read(Query(table: query.table)) }.items
            let present = Set(current.map { Array($0.id.utf8) })
            let ghosts = deleted.filter { !present.contains(Array($0.id.utf8)) }
            return try QueryEvaluator(query: query, schema: schema.requireTable(query.table)).run(
                over: current + ghosts)
        }

        private func bentRead(_ query: Query) throws -> QueryResult {
            if fault == .transactionReadsUndeclaredTablesAsEmpty, isUndeclared(query.table) {
                return QueryResult(items: [], totalCount: query.includeTotalCount ? 0 : nil)
            }
            if readsCommitted(query.table), let rows = snapshot[query.table] {
                return try QueryEvaluator(query: query, schema: schema.requireTable(query.table)).run(over: rows)
            }
            var result = try store.distortedRead(query, schema: schema, inTransaction: true) { query in
                try perform(query.table) { try $0.read(query) }
            }
            if fault == .transactionReadsDropNegativeZeroSign {
                result.items = result.items.map(store.withoutNegativeZero)
            }
            if fault == .transactionCountsIgnoreOwnWrites, query.includeTotalCount,
                let committed = snapshot[query.table]
            {
                // The count from the committed state (a counter updated at commit).
                result.totalCount = try QueryEvaluator(query: query, schema: schema.requireTable(query.table)).run(
                    over: committed
                ).totalCount
            }
            if fault == .transactionReadsAnswerItemsAsWritten, query.selection == nil,
                let written = itemsAsWritten[query.table]
            {
                result.items = result.items.map { written[Array($0.id.utf8)] ?? $0 }
            }
            return try withOwnDeletes(query, result)
        }

        func lookup(table: String, id: String) throws -> Item? {
            if fault == .transactionLooksUpUndeclaredTablesAsMissing, isUndeclared(table) { return nil }
            let id = fault == .truncatesIdsAtNUL ? BrokenStore.beforeNUL(id) : id
            let found: Item?
            let committed =
                fault == .transactionLookupsIgnoreOwnWrites
                || (fault == .ownWritesVisibleOnlyInTheLastWrittenTable && table != lastWrittenTable)
            if committed, let rows = snapshot[table] {
                found = rows.first { $0.id.utf8.elementsEqual(id.utf8) }
            } else if fault == .transactionLookupAnswersItemsAsWritten,
                let item = itemsAsWritten[table]?[Array(id.utf8)]
            {
                found = item
            } else {
                found = try perform(table) { try $0.lookup(table: table, id: id) }
            }
            if fault == .transactionLookupOfMissingIdThrows, found == nil {
                throw OfflineSyncError(.invalidOperation, "table '\(table)' has no row with id '\(id)'")
            }
            return found
        }

        func upsert(_ items: [Item], into table: String, origin: WriteOrigin) throws {
            if isUndeclared(table) {
                if fault == .ignoresLocalWritesToUndeclaredTables && origin == .local { return }
                if fault == .ignoresServerWritesToUndeclaredTables && origin == .server { return }
            }
            guard let declared = schema.table(named: table) else {
                return try perform(table) { try $0.upsert(items, into: table, origin: origin) }
            }
            var items = store.distorted(items, table: declared, origin: origin)
            if fault == .keepsTheFirstOfDuplicateIdsInABatch {
                // INSERT OR IGNORE of the batch: a repeated id keeps its first row.
                var seen: Set<[UInt8]> = []
                items = items.filter { seen.insert(Array($0.id.utf8)).inserted }
            }
            if fault == .upsertsDropTheRowsPastTheFirst1000, items.count > 1_000 {
                // A chunked write whose loop stops after the first chunk.
                items = Array(items.prefix(1_000))
            }
            if fault == .lookupsAnswerStaleRowsAfterServerUpserts, origin == .local {
                store.forgetCachedRows(table, ids: items.map(\.id))
            }
            var origin = origin
            if fault == .dropsUnknownLocalColumns { origin = .server }
            let merges =
                (fault == .mergesLocalUpserts && origin == .local)
                || (fault == .mergesServerUpserts && origin == .server)
            let keepsUnderNull =
                (fault == .keepsOldValueUnderExplicitNullFromLocal && origin == .local)
                || (fault == .keepsOldValueUnderExplicitNullFromServer && origin == .server)
            if merges || keepsUnderNull {
                items = try items.map { item in
                    guard let existing = try perform(table, { try $0.lookup(table: table, id: item.id) }) else {
                        return item
                    }
                    var merged = item
                    if merges {
                        merged.values = existing.values.merging(item.values) { $1 }
                    } else {
                        for (column, value) in item.values where value.isNull {
                            merged.values[column] = existing[column]
                        }
                    }
                    return merged
                }
            }
            var replaced: [Item] = []
            if fault == .upsertKeepsOldIndexEntries || fault == .reopenKeepsTheFirstVersionOfReplacedRows {
                for item in items {
                    if let old = try perform(table, { try $0.lookup(table: table, id: item.id) }) {
                        replaced.append(old)
                    }
                }
            }
            do {
                try perform(table) { try $0.upsert(items, into: table, origin: origin) }
            } catch let error as OfflineSyncError where error.code == .invalidValue {
                if fault == .serverWriteErrorsOmitTheColumn, origin == .server {
                    throw OfflineSyncError(.invalidValue, "a value from the server for table '\(table)' is invalid")
                }
                if fault == .invalidValueErrorsNameTheFirstRow, let first = items.first,
                    let bad = items.first(where: { (try? declared.normalize($0, origin: origin)) == nil }),
                    bad.id != first.id
                {
                    throw OfflineSyncError(
                        .invalidValue, error.message.replacingOccurrences(of: "'\(bad.id)'", with: "'\(first.id)'"))
                }
                throw error
            }
            upserted += items.compactMap { item in (try? declared.normalize(item, origin: origin)).map { (table, $0) } }
            if fault == .upsertKeepsOldIndexEntries {
                // An update that adds the new index entries and leaves the old ones.
                store.keepStaleEntries(replaced.map { (table, $0) }, schema: schema)
            }
            if fault == .reopenKeepsTheFirstVersionOfReplacedRows {
                for old in replaced { restoreOnClose(old, in: table) }
            }
            if fault == .keepsUnknownServerColumns, origin == .server { store.rememberExtras(items, table: declared) }
            if fault == .transactionLookupAnswersItemsAsWritten || fault == .transactionReadsAnswerItemsAsWritten {
                for item in items { itemsAsWritten[table, default: [:]][Array(item.id.utf8)] = item }
            }
            if (fault == .rollbackKeepsServerUpserts && origin == .server)
                || fault == .rollbackRestoresOnlyTheLastWrittenTable
            {
                operations.append(.upsert(items, table, origin))
            }
            wrote(table)
        }

        func delete(ids: [String], from table: String) throws {
            if fault == .ignoresDeletesByIdsFromUndeclaredTables, isUndeclared(table) { return }
            var ids = ids
            if fault == .truncatesIdsAtNUL { ids = ids.map(BrokenStore.beforeNUL).filter { !$0.isEmpty } }
            if fault == .deletingMissingIdsThrows {
                for id in ids where try perform(table, { try $0.lookup(table: table, id: id) }) == nil {
                    throw OfflineSyncError(.invalidOperation, "table '\(table)' has no row with id '\(id)' to delete")
                }
            }
            if fault == .deletesIdsIgnoringTrailingSpaces {
                ids += ids.map { String($0.reversed().drop { $0 == " " }.reversed()) }.filter { !$0.isEmpty }
            }
            try noteDeleted(ids, from: table)
            if fault == .countsMissingIdsAsDeleted, !isUndeclared(table) {
                // The counter goes down by every id listed; the rows, by the present ones.
                let present = try Set(ids.map { Array($0.utf8) }).filter { key in
                    let id = String(decoding: key, as: UTF8.self)
                    return try perform(table) { try $0.lookup(table: table, id: id) } != nil
                }
                rowCountOffsets[table, default: 0] += present.count - ids.count
            }
            if fault == .deletesOnlyTheFirst999Ids { ids = Array(ids.prefix(999)) }
            if fault == .lookupsAnswerStaleRowsAfterServerUpserts { store.forgetCachedRows(table, ids: ids) }
            if fault == .deletesIdsCaseInsensitively, !isUndeclared(table) {
                let folded = Set(ids.map { $0.lowercased() })
                let all = try perform(table) { try $0.read(Query(table: table, selection: [])) }.items.map(\.id)
                ids += all.filter { folded.contains($0.lowercased()) }
            }
            try perform(table) { try $0.delete(ids: ids, from: table) }
            itemsAsWritten[table] = itemsAsWritten[table]?.filter { !ids.contains($0.value.id) }
            if fault == .rollbackKeepsDeletesByIds || fault == .rollbackRestoresOnlyTheLastWrittenTable {
                operations.append(.delete(ids, table))
            }
            wrote(table)
        }

        /// Notes the rows `ids` name as deleted, for the faults that remember them.
        private func noteDeleted(_ ids: [String], from table: String) throws {
            guard
                fault == .deleteKeepsIndexEntries || fault == .filteredTransactionReadsMissOwnDeletes
                    || fault == .reopenBringsBackDeletedRows
                    || fault == .deleteByQueryCountsRowsDeletedEarlierInTheTransaction,
                !isUndeclared(table)
            else { return }
            let rows = try ids.compactMap { id in try perform(table) { try $0.lookup(table: table, id: id) } }
            deletedRows[table, default: []] += rows
            if fault == .reopenBringsBackDeletedRows { for row in rows { restoreOnClose(row, in: table) } }
            if fault == .deleteKeepsIndexEntries { store.keepStaleEntries(rows.map { (table, $0) }, schema: schema) }
        }

        func insertNew(_ items: [Item], into table: String, origin: WriteOrigin) throws -> [String] {
            var present: [String] = []
            var absent: [Item] = []
            var seen: Set<[UInt8]> = []
            let committed = snapshot[table].map { Set($0.map { Array($0.id.utf8) }) }
            for (position, item) in items.enumerated() {
                let isNew =
                    seen.insert(Array(item.id.utf8)).inserted || fault == .insertNewMissesDuplicatesInsideTheBatch
                let there: Bool
                if fault == .insertNewFindsOnlyTheFirst999PresentIds, position >= 999 {
                    there = false  // past the one `SELECT id … WHERE id IN (?, …)` of 999 parameters
                } else if fault == .insertNewIgnoresOwnWrites, let committed {
                    there = committed.contains(Array(item.id.utf8))
                } else {
                    there = try lookup(table: table, id: item.id) != nil
                }
                if !isNew || there { present.append(item.id) } else { absent.append(item) }
            }
            if fault == .insertNewOverwritesPresentRows {
                // INSERT OR REPLACE where INSERT OR IGNORE was meant.
                try upsert(items, into: table, origin: origin)
                return present
            }
            if !absent.isEmpty {
                var written = origin
                if fault == .insertNewDropsUnknownLocalColumns { written = .server }
                if fault == .insertNewRejectsUnknownServerColumns { written = .local }
                if fault == .insertNewStoresInvalidValuesAsNull, let declared = schema.table(named: table) {
                    absent = absent.map { BrokenStore.withoutInvalidValues($0, table: declared, origin: written) }
                }
                try upsert(absent, into: table, origin: written)
                // An insert on a connection of its own, outside the transaction.
                if fault == .rollbackKeepsInsertNewRows { operations.append(.upsert(absent, table, origin)) }
            }
            if fault == .insertNewCountsPresentRowsAsInserted { rowCountOffsets[table, default: 0] += present.count }
            if fault == .insertNewReportsEveryId { return items.map(\.id) }
            if fault == .insertNewReportsARepeatedPresentIdOnce {
                var reported: Set<[UInt8]> = []
                return present.filter { reported.insert(Array($0.utf8)).inserted }
            }
            return present
        }

        func delete(matching query: Query) throws -> Int {
            try withQueryErrorsBent(query.table) { try bentDelete(matching: query) }
        }

        private func bentDelete(matching query: Query) throws -> Int {
            if fault == .ignoresDeletesByQueryOnUndeclaredTables, isUndeclared(query.table) { return 0 }
            if fault == .lookupsAnswerStaleRowsAfterServerUpserts { store.forgetCachedRows(query.table, ids: nil) }
            if fault == .unfilteredCountIgnoresDeletesByQuery, !isUndeclared(query.table) {
                let count = try perform(query.table) { try $0.delete(matching: query) }
                store.countDeletedByQuery(count, in: query.table)
                wrote(query.table)
                return count
            }
            if fault == .deleteByQueryCountsRowsDeletedEarlierInTheTransaction, !isUndeclared(query.table),
                let deleted = deletedRows[query.table], !deleted.isEmpty
            {
                // An index that still lists the rows deleted earlier chooses among them too.
                var chosen = query
                chosen.includeTotalCount = false
                chosen.selection = nil
                let current = try perform(query.table) { try $0.read(Query(table: query.table)) }.items
                let present = Set(current.map { Array($0.id.utf8) })
                let ghosts = deleted.filter { !present.contains(Array($0.id.utf8)) }
                let ids = try QueryEvaluator(query: chosen, schema: schema.requireTable(query.table)).run(
                    over: current + ghosts
                ).items.map(\.id)
                try noteDeleted(ids, from: query.table)
                try perform(query.table) { try $0.delete(ids: ids, from: query.table) }
                wrote(query.table)
                return ids.count
            }
            if fault == .deleteKeepsIndexEntries || fault == .filteredTransactionReadsMissOwnDeletes
                || fault == .reopenBringsBackDeletedRows
                || fault == .deleteByQueryCountsRowsDeletedEarlierInTheTransaction,
                !isUndeclared(query.table)
            {
                var chosen = query
                chosen.includeTotalCount = false
                chosen.selection = []
                let ids = try perform(query.table) { try $0.read(chosen) }.items.map(\.id)
                try noteDeleted(ids, from: query.table)
            }
            let bent: Set<Fault> = [
                .deleteByQueryIgnoresSkip, .deleteByQueryCapsTopAt1000, .deleteByQueryTreatsNullComparisonsAsUnknown,
                .deleteByQueryInTransactionIgnoresOwnWrites, .rollbackKeepsDeletesByQuery,
                .rollbackRestoresOnlyTheLastWrittenTable, .transactionLookupAnswersItemsAsWritten,
                .transactionReadsAnswerItemsAsWritten, .deleteByQueryTruncatesInListsAt999,
                .deleteByQueryIgnoresOrderByWithTop, .deleteByQueryReportsTheMatchingCount,
                .deleteByQueryTreatsTopZeroAsNoLimit,
            ]
            guard bent.contains(fault) else {
                let count = try perform(query.table) { try $0.delete(matching: query) }
                wrote(query.table)
                return count
            }
            var chosen = query
            chosen.includeTotalCount = false
            chosen.selection = nil
            if fault == .deleteByQueryIgnoresSkip { chosen.skip = 0 }
            if fault == .deleteByQueryCapsTopAt1000 { chosen.top = chosen.top.map { min($0, 1_000) } }
            if fault == .deleteByQueryTruncatesInListsAt999 {
                chosen.filter = chosen.filter.map { store.rewrite($0, lists: { Array($0.prefix(999)) }) }
            }
            if fault == .deleteByQueryIgnoresOrderByWithTop, chosen.top != nil { chosen.orderBy = [] }
            if fault == .deleteByQueryTreatsTopZeroAsNoLimit, chosen.top == 0 { chosen.top = nil }
            var rows: [Item]
            if fault == .deleteByQueryInTransactionIgnoresOwnWrites, let committed = snapshot[query.table] {
                rows = try QueryEvaluator(query: chosen, schema: schema.requireTable(query.table)).run(over: committed)
                    .items
            } else {
                rows = try perform(query.table) { try $0.read(chosen) }.items
            }
            if fault == .deleteByQueryTreatsNullComparisonsAsUnknown, let filter = query.filter {
                let compared = store.columns(of: filter)
                rows.removeAll { row in compared.contains { row[$0].isNull } }
            }
            let ids = rows.map(\.id)
            // The count of a COUNT(*) over the filter, not of the rows the window deleted.
            let matching =
                fault == .deleteByQueryReportsTheMatchingCount
                ? try perform(query.table) {
                    try $0.read(Query(table: query.table, filter: query.filter, top: 0, includeTotalCount: true))
                }.totalCount : nil
            let tracked = fault == .rollbackKeepsDeletesByQuery || fault == .rollbackRestoresOnlyTheLastWrittenTable
            try perform(query.table) { try $0.delete(ids: ids, from: query.table) }
            itemsAsWritten[query.table] = itemsAsWritten[query.table]?.filter { !ids.contains($0.value.id) }
            if tracked { operations.append(.delete(ids, query.table)) }
            wrote(query.table)
            if let matching { return matching }
            return ids.count
        }
    }
}
