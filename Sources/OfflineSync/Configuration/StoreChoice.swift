/// A value of an enumerated store option, such as a backend's durability levels: the option's
/// accepted values are the raw values of the cases, and each case says in one line what it means.
///
/// A backend declares its choices as an enumeration and its option with
/// ``StoreOption/choice(_:_:summary:)`` (or ``StoreOption/durability(_:)``), then reads the
/// value with ``StoreConfiguration/choice(_:default:)``:
///
/// ```swift
/// public enum Compression: String, StoreChoice {
///     case none, lz4
///     public var summary: String { self == .none ? "store pages as they are" : "compress pages with LZ4" }
/// }
/// let option = StoreOption.choice("compression", Compression.self, summary: "how pages are stored")
/// let compression = try configuration.choice("compression", default: Compression.none)
/// ```
public protocol StoreChoice: RawRepresentable, CaseIterable, Sendable where RawValue == String {
    /// One line saying what this choice means, for help texts.
    var summary: String { get }
}
