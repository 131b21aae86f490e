import Synchronization

/// A one-shot switch: `take()` is true once after `arm()` (or once from the start when `armed`).
final class Trigger: Sendable {
    private let state: Mutex<Bool>
    init(armed: Bool = false) { state = Mutex(armed) }
    func arm() { state.withLock { $0 = true } }
    func take() -> Bool {
        state.withLock { value in
            defer { value = false }
            return value
        }
    }
}
