/// Compares application keys in constant time (for keys of the same length), so that response
/// timing does not reveal how much of a guess was right.
enum ApplicationKey {
    static func matches(_ given: String, _ expected: String) -> Bool {
        let given = Array(given.utf8)
        let expected = Array(expected.utf8)
        var difference = UInt8(truncatingIfNeeded: given.count ^ expected.count)
        difference |= given.count == expected.count ? 0 : 1
        for index in 0..<expected.count {
            difference |= expected[index] ^ (index < given.count ? given[index] : 0)
        }
        return difference == 0
    }
}
