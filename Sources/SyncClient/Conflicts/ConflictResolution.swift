/// A choice for a conflicted operation.
public enum ConflictResolution: String, Sendable, Codable, CaseIterable {
    /// Keep the local values over the server's version, and push the operation now.
    case useClient = "use-client"
    /// Take the server's version (or its delete) and drop the local change.
    case useServer = "use-server"
    /// Change nothing: the operation stays pending and will conflict again on the next push.
    case cancel
}
