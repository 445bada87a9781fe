/// The one deterministic random generator of the tests (xorshift64*), so that random cuts,
/// mutations and kill moments are the same on every run and every machine.
///
/// Use it for everything random in Tests/: `Int.random(in:using:)` and friends take it as a
/// `RandomNumberGenerator`, and ``next(in:)`` is the short form. A failing seed is a
/// reproducible case. Changing the algorithm changes every random cut in the suite
/// (`SeededRandomTests` pins its first values).
public struct SeededRandom: RandomNumberGenerator {
    public private(set) var state: UInt64

    public init(seed: UInt64) {
        state = seed &+ 0x9E37_79B9_7F4A_7C15
        // xorshift never leaves 0; only one seed lands there.
        if state == 0 { state = 0x9E37_79B9_7F4A_7C15 }
    }

    public mutating func next() -> UInt64 {
        state ^= state >> 12; state ^= state << 25; state ^= state >> 27
        return state &* 2685821657736338717
    }

    /// A uniformly chosen integer in `range`.
    public mutating func next(in range: ClosedRange<Int>) -> Int { Int.random(in: range, using: &self) }
}
