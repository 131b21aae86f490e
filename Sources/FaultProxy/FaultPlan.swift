/// The rules a proxy applies, and the seed of its random choices: the same plan and the same
/// sequence of requests give the same faults, so a failing run can be replayed from its seed.
public struct FaultPlan: Sendable, CustomStringConvertible {
    /// Tried in order; the first rule that fires decides the fault. No rule firing means pass-through.
    public var rules: [FaultRule]
    public var seed: UInt64

    public init(_ rules: [FaultRule] = [], seed: UInt64 = 1) {
        self.rules = rules
        self.seed = seed
    }

    /// No faults.
    public static let passThrough = FaultPlan()

    /// One fault for every request that matches, with probability `probability`.
    public static func always(_ fault: Fault, probability: Double = 1, seed: UInt64 = 1) -> FaultPlan {
        FaultPlan([FaultRule(fault, probability: probability)], seed: seed)
    }

    /// Rules that can never fire, each with the earlier rule that fires first on every request it
    /// matches (the first rule that fires decides): after `delay=25`, `drop,p=0.2` drops nothing.
    public var shadowedRules: [(rule: FaultRule, by: FaultRule)] {
        rules.indices.compactMap { index in
            rules[..<index].first { $0.alwaysFires(before: rules[index]) }.map { (rules[index], $0) }
        }
    }

    public var description: String {
        "seed \(seed): " + (rules.isEmpty ? "no faults" : rules.map(\.description).joined(separator: "; "))
    }
}

/// A plan in use: per-rule counters and the seeded generator. Not thread-safe; the proxy guards it.
struct FaultChooser {
    let plan: FaultPlan
    private var counts: [Int]
    private var random: SplitMix64

    init(_ plan: FaultPlan) {
        self.plan = plan
        counts = Array(repeating: 0, count: plan.rules.count)
        random = SplitMix64(seed: plan.seed)
    }

    mutating func choose(method: String, path: String) -> Fault {
        var chosen: Fault?
        for (index, rule) in plan.rules.enumerated() where rule.matches(method: method, path: path) {
            counts[index] += 1
            // Draw for every matching rule (fired or not) so one rule's outcome never shifts another's.
            let draw = random.nextUnit()
            guard chosen == nil else { continue }
            if let nth = rule.nth, counts[index] != nth { continue }
            if let every = rule.every, counts[index] % every != 0 { continue }
            if draw < rule.probability { chosen = rule.fault }
        }
        return chosen ?? .passThrough
    }
}

/// A small, fast, seedable generator (Steele, Lea and Flood's SplitMix64), the same on every platform.
public struct SplitMix64: RandomNumberGenerator {
    private var state: UInt64

    public init(seed: UInt64) { state = seed }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A number in 0..<1.
    mutating func nextUnit() -> Double {
        Double(next() >> 11) / Double(1 << 53)
    }
}
