import Synchronization

/// An integer that tasks racing each other in a test read and write (a count, a status).
public final class SharedInt: Sendable {
    private let atomic: Atomic<Int>

    public init(_ value: Int = 0) { atomic = Atomic(value) }

    public var value: Int { atomic.load(ordering: .sequentiallyConsistent) }

    public func set(_ value: Int) { atomic.store(value, ordering: .sequentiallyConsistent) }

    public func add(_ amount: Int = 1) { atomic.add(amount, ordering: .sequentiallyConsistent) }
}
