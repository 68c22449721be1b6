import ArgumentParser

/// The check of a negative number given to an option (`--page-size -1`) that ArgumentParser
/// could not read.
///
/// ArgumentParser reads `-1` as a short option, not as the option's value, and reports the
/// option's value as missing, which points away from the mistake. Options whose rule is known
/// take negative values and state the rule themselves (`query --top`); this check covers every
/// other option, none of which takes a negative number.
enum NegativeValueCheck {
    /// The error to show instead of a parse error whose text is `message`, when that error is a
    /// missing value of an option that `arguments` follow with a negative number; `nil` otherwise.
    static func error(in arguments: [String], message: String) -> ValidationError? {
        let prefix = "Missing value for '"
        guard message.hasPrefix(prefix + "--") else { return nil }
        let name = String(message.dropFirst(prefix.count).prefix { $0 != " " && $0 != "'" })
        guard let index = arguments.firstIndex(of: name), index + 1 < arguments.count else { return nil }
        let value = arguments[index + 1]
        guard value.hasPrefix("-"), Double(value) != nil else { return nil }
        return ValidationError("\(name) takes no negative number, got \(value)")
    }
}
