/// The messages the official server answers with, which clients may recognise by their text.
public enum ProtocolMessage {
    /// 404 for a missing or soft-deleted item.
    public static let itemDoesNotExist = "The item does not exist"
    /// 400 for a request with a `ZUMO-API-VERSION` other than 2.0.x.
    public static let invalidAPIVersion =
        "An invalid API version was specified in the request, this request needs to specify a ZUMO-API-VERSION of 2.0.0."

    /// 400 for a client that sends a server-owned property (`createdAt`, `updatedAt`, `deleted`).
    public static func reservedProperty(_ name: String) -> String {
        "Cannot update item with property '\(name)' as it is reserved"
    }

    /// 400 for `$top` above the server's maximum.
    public static func tooManyRecords(maximum: Int) -> String {
        "You cannot request more than \(maximum) records"
    }
}
