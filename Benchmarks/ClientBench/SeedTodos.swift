import AsyncHTTPClient
import Foundation
import NIOCore

/// Seeds `count` todos (`row-N`, "task number N with some words") into the service at `base`, eight
/// POSTs at a time through async-http-client (not measured): for sections that start a service of their own.
func seedTodos(_ count: Int, base: String) async throws {
    try await withThrowingTaskGroup(of: Void.self) { group in
        for worker in 0..<8 {
            group.addTask {
                for index in stride(from: worker, to: count, by: 8) {
                    var request = HTTPClientRequest(url: base + "/tables/todoitem")
                    request.method = .POST
                    request.headers.add(name: "Content-Type", value: "application/json")
                    request.body = .bytes(
                        ByteBuffer(string: #"{"id":"row-\#(index)","text":"task number \#(index) with some words"}"#))
                    _ = try await HTTPClient.shared.execute(request, timeout: .seconds(30)).body.collect(upTo: 1 << 20)
                }
            }
        }
        try await group.waitForAll()
    }
}
