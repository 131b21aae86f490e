/// Why a doctor run ended before its last check, in the doctor's words.
public enum DoctorStop: Error, Sendable, Hashable, Codable, CustomStringConvertible {
    /// No connection could be made (or it broke): carries the detail.
    case unreachable(String)
    /// No byte of an answer for this many seconds.
    case stalled(seconds: Double)
    /// An exchange took longer than this many seconds (also a service that trickles its answer).
    case tooSlow(seconds: Double)
    /// The run was cancelled (Ctrl-C, SIGTERM, the page's Cancel).
    case cancelled
    /// The service redirected elsewhere; not followed.
    case redirectRefused(to: String)
    /// The service refused access (HTTP 401 or 403).
    case notAuthorized(status: Int)
    /// Anything else the transport reported.
    case other(String)

    /// The stop for a transport failure.
    init(_ error: SyncError) {
        switch error {
        case .stopped(.unreachable(let detail)), .stopped(.connectionLost(let detail)): self = .unreachable(detail)
        case .stopped(.stalled(let seconds)): self = .stalled(seconds: seconds)
        case .stopped(.tooSlow(let seconds)): self = .tooSlow(seconds: seconds)
        case .stopped(.cancelled): self = .cancelled
        case .stopped(.redirectRefused(let target)): self = .redirectRefused(to: target)
        case .stopped(.notAuthorized(let status, _)): self = .notAuthorized(status: status.code)
        default: self = .other(error.description)
        }
    }

    /// What happened and what the user can do.
    public var description: String {
        switch self {
        case .unreachable(let detail):
            "The service is unreachable (\(detail)). Check the address and that the service runs."
        case .stalled(let seconds):
            "The service stopped sending its answer (nothing for \(StopReason.seconds(seconds))); the run stopped there. "
                + "Check the service's health."
        case .tooSlow(let seconds):
            "An answer took longer than \(StopReason.seconds(seconds)) (the service trickles or is overloaded); the run "
                + "stopped there. Check the service's health."
        case .cancelled:
            "Cancelled."
        case .redirectRefused(let target):
            "The service redirected to \(target); the doctor does not follow that. Give the service's own address."
        case .notAuthorized(let status):
            "The service refused access (HTTP \(status)). Give the application key (--app-key) it needs."
        case .other(let detail):
            detail
        }
    }
}
