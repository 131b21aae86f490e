import Foundation

/// A one-shot switch: `take()` is true once after `arm()` (or once from the start when `armed`).
final class Trigger: Sendable {
    private let state: Locked<Bool>
    init(armed: Bool = false) { state = Locked(armed) }
    func arm() { state.withLock { $0 = true } }
    func take() -> Bool {
        state.withLock { value in
            defer { value = false }
            return value
        }
    }
}

/// A value behind a lock, for test bookkeeping shared with server threads.
final class Locked<Value: Sendable>: @unchecked Sendable {
    // Every access goes through `lock`.
    private var value: Value
    private let lock = NSLock()

    init(_ value: Value) { self.value = value }

    func withLock<T>(_ body: (inout Value) throws -> T) rethrows -> T {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}
