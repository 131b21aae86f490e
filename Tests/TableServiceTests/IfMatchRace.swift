import SyncProtocol

/// Twenty PATCHes of the item `race` at once, each with the same `If-Match`, spread over
/// `instances` in turn: each reply with the number of the writer that sent it.
func raceTwentyPatches(of instances: [TestServer], ifMatch etag: String) async throws -> [(Int, TestServer.Reply)] {
    try await withThrowingTaskGroup(of: (Int, TestServer.Reply).self) { group in
        for index in 0..<20 {
            let instance = instances[index % instances.count]
            group.addTask {
                let reply = try await instance.send(
                    .patch, "/tables/todoitem/race", json: ["text": "writer \(index)"],
                    headers: [ProtocolHeader.apiVersion: "2.0.0", .ifMatch: etag])
                return (index, reply)
            }
        }
        return try await group.reduce(into: []) { $0.append($1) }
    }
}
