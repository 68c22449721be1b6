import Foundation
import Synchronization

/// The `Date` header value of answers (RFC 9110 IMF-fixdate), formatted once per second and
/// shared by every connection.
final class ResponseDate: Sendable {
    private let cache = Mutex<(second: time_t, text: String)>((-1, ""))

    /// Now, as a `Date` header says it.
    var now: String {
        var clock = time(nil)
        return cache.withLock { cache in
            guard clock != cache.second else { return cache.text }
            var parts = tm()
            gmtime_r(&clock, &parts)
            let days = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
            let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
            func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
            cache.text =
                "\(days[Int(parts.tm_wday)]), \(two(parts.tm_mday)) \(months[Int(parts.tm_mon)]) \(parts.tm_year + 1900) "
                + "\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec)) GMT"
            cache.second = clock
            return cache.text
        }
    }
}
