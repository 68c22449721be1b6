import OfflineSync

/// Rows laid out in aligned columns for a terminal.
///
/// Cells and values hold text from stores and servers: control characters in them (line breaks,
/// tabs, terminal escape sequences …) are shown escaped (`\n`, `\u{1B}`), so they can neither
/// break the layout nor drive the terminal.
struct TextTable {
    var headers: [String]
    var rows: [[String]] = []

    /// The widest a cell is shown; longer text is cut with `…`.
    static let maximumCellWidth = 48

    var rendered: String {
        let cells = ([headers] + rows).map { $0.map(TextTable.clip) }
        var widths = headers.map { _ in 0 }
        for row in cells {
            for (column, cell) in row.enumerated() where column < widths.count {
                widths[column] = max(widths[column], cell.count)
            }
        }
        var lines = cells.map { row in
            row.enumerated().map { column, cell in
                column == row.count - 1 ? cell : cell + String(repeating: " ", count: widths[column] - cell.count)
            }.joined(separator: "  ").trimmingTrailingSpaces
        }
        lines.insert(widths.map { String(repeating: "-", count: $0) }.joined(separator: "  "), at: 1)
        return lines.joined(separator: "\n")
    }

    /// `name  value` lines with the values aligned (and escaped like cells, but not cut).
    static func pairs(_ pairs: [(String, String)]) -> String {
        let width = pairs.map(\.0.count).max() ?? 0
        return pairs.map {
            $0.0 + String(repeating: " ", count: width - $0.0.count) + "  " + $0.1.escapingControlCharacters
        }
            .joined(separator: "\n")
    }

    /// How a value shows in a cell: text as is, `null` as empty.
    static func cell(_ value: Value) -> String {
        switch value {
        case .null: return ""
        case .string(let text): return text
        default: return value.description
        }
    }

    private static func clip(_ text: String) -> String {
        let flat = text.escapingControlCharacters
        return flat.count > maximumCellWidth ? flat.prefix(maximumCellWidth - 1) + "…" : flat
    }
}

extension String {
    var trimmingTrailingSpaces: String {
        var text = self
        while text.last == " " { text.removeLast() }
        return text
    }
}
