import ArgumentParser
import OfflineSync

/// The check of a command line's first word before ArgumentParser reads it.
///
/// The root command takes no arguments of its own, so a first word that is not an option must
/// be a subcommand. ArgumentParser, given a misspelt one (`offline-sync inspekt --store …`),
/// reports the first option after it as unknown ("Unknown option '--store'"), which points away
/// from the mistake; this check names the word and the nearest subcommand instead.
enum SubcommandCheck {
    /// The error for `arguments` (the command line without the program name) when its first word
    /// is neither an option nor a subcommand of `command`, or `nil` when it is fine.
    static func error(in arguments: [String], of command: any ParsableCommand.Type) -> ValidationError? {
        guard let first = arguments.first, !first.hasPrefix("-") else { return nil }
        let names = command.configuration.subcommands.map { $0._commandName } + ["help"]
        guard !names.contains(first) else { return nil }
        let shown = String(first.prefix(40)).escapingControlCharacters
        let list = names.filter { $0 != "help" }.joined(separator: ", ")
        if let nearest = nearest(to: first, among: names) {
            return ValidationError(
                "unknown subcommand '\(shown)'; did you mean '\(nearest)'? The subcommands are \(list)")
        }
        return ValidationError("unknown subcommand '\(shown)'; the subcommands are \(list)")
    }

    /// The name closest to `word` by edit distance (a letter inserted, removed, changed or two
    /// letters swapped), when it is close enough to be a likely misspelling: at most a third of
    /// the name's letters apart (one for names of up to five letters), or a prefix of it.
    static func nearest(to word: String, among names: [String]) -> String? {
        let typed = word.lowercased()
        if let prefixed = names.first(where: { typed.count >= 3 && $0.hasPrefix(typed) }) { return prefixed }
        let scored = names.map { (name: $0, distance: distance(typed, $0)) }
        guard let best = scored.min(by: { $0.distance < $1.distance }) else { return nil }
        return best.distance <= max(1, best.name.count / 3) ? best.name : nil
    }

    /// The optimal string alignment distance between `a` and `b`, by characters.
    static func distance(_ a: String, _ b: String) -> Int {
        let a = Array(a)
        let b = Array(b)
        if a.isEmpty || b.isEmpty { return max(a.count, b.count) }
        var table = [[Int]](repeating: [Int](repeating: 0, count: b.count + 1), count: a.count + 1)
        for i in 0...a.count { table[i][0] = i }
        for j in 0...b.count { table[0][j] = j }
        for i in 1...a.count {
            for j in 1...b.count {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                table[i][j] = min(table[i - 1][j] + 1, table[i][j - 1] + 1, table[i - 1][j - 1] + cost)
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] {
                    table[i][j] = min(table[i][j], table[i - 2][j - 2] + 1)
                }
            }
        }
        return table[a.count][b.count]
    }
}
