/// What a signed-in person may do on a dashboard that asks who you are (one bound off loopback).
public enum AccessRole: String, Sendable, Codable, CaseIterable {
    /// Reads every page and API; every state-changing request answers 403.
    case viewer
    /// Reads and changes everything, and hands out sign-in links.
    case `operator`
}
