/// A small, fast, deterministic random number generator (SplitMix64): the same seed gives the same
/// numbers on every run and every platform, so a generated corpus, a benchmark data set or a fuzz
/// run can be repeated exactly. Not for anything that needs unpredictable numbers.
package struct SeededRandom: RandomNumberGenerator, Sendable {
    private var state: UInt64

    /// Creates a generator from a seed.
    package init(seed: UInt64) {
        state = seed
    }

    /// The next 64 random bits.
    package mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A uniformly chosen element (the collection must not be empty).
    package mutating func pick<C: Collection>(_ elements: C) -> C.Element where C.Index == Int {
        elements[elements.startIndex + Int(next() % UInt64(elements.count))]
    }

    /// `true` with probability `percent` / 100.
    package mutating func chance(_ percent: Int) -> Bool {
        Int(next() % 100) < percent
    }

    /// A number in `range`.
    package mutating func int(in range: ClosedRange<Int>) -> Int {
        range.lowerBound + Int(next() % UInt64(range.count))
    }
}
