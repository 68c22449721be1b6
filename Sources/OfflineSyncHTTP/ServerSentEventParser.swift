/// One event of a Server-Sent Events stream: its `event` type (`message` when the server gave
/// none) and its `data` lines joined with `\n`.
struct ServerSentEvent: Sendable, Hashable {
    var type: String
    var data: String
}

/// Reads a `text/event-stream` body as the HTML Living Standard's "event stream interpretation"
/// says: lines end with CRLF, LF or CR; `field: value` lines (one optional space after the colon),
/// comment lines beginning with `:`; an empty line dispatches the event gathered so far (one with no
/// `data` line is dropped). `id` and `retry` are read and ignored: a change stream needs neither
/// (every reconnection pulls every table). Bytes are fed as they arrive, in chunks cut anywhere.
struct ServerSentEventParser {
    /// The longest line kept, in bytes; longer lines are cut (a change event is under 200 bytes).
    static let maximumLineBytes = 64 << 10

    private var line: [UInt8] = []
    private var lastWasCarriageReturn = false
    private var eventType = ""
    private var dataLines: [String] = []
    private var hasData = false

    /// Feeds bytes and returns the events they complete.
    mutating func feed(_ bytes: some Sequence<UInt8>) -> [ServerSentEvent] {
        var events: [ServerSentEvent] = []
        for byte in bytes {
            switch byte {
            case UInt8(ascii: "\n"):
                if lastWasCarriageReturn {
                    lastWasCarriageReturn = false  // the LF of a CRLF
                    continue
                }
                endLine(into: &events)
            case UInt8(ascii: "\r"):
                lastWasCarriageReturn = true
                endLine(into: &events)
                continue
            default:
                if line.count < Self.maximumLineBytes { line.append(byte) }
            }
            lastWasCarriageReturn = false
        }
        return events
    }

    private mutating func endLine(into events: inout [ServerSentEvent]) {
        defer { line.removeAll(keepingCapacity: true) }
        if line.isEmpty {
            if hasData {
                events.append(
                    ServerSentEvent(type: eventType.isEmpty ? "message" : eventType, data: dataLines.joined(separator: "\n")))
            }
            eventType = ""
            dataLines = []
            hasData = false
            return
        }
        if line.first == UInt8(ascii: ":") { return }  // a comment (the heartbeat)
        let field: String
        var value: String
        if let colon = line.firstIndex(of: UInt8(ascii: ":")) {
            field = String(decoding: line[..<colon], as: UTF8.self)
            var start = colon + 1
            if start < line.count, line[start] == UInt8(ascii: " ") { start += 1 }
            value = String(decoding: line[start...], as: UTF8.self)
        } else {
            field = String(decoding: line, as: UTF8.self)
            value = ""
        }
        switch field {
        case "event":
            eventType = value
        case "data":
            dataLines.append(value)
            hasData = true
        default:
            value = ""  // id, retry and unknown fields are ignored
        }
    }
}
