import Foundation
import HTTPServer
import SyncProtocol

/// Who sends a request only a revoked user or device may send: the token's user, the device, and
/// the revocation that refuses them everywhere else.
struct RevokedCaller: Sendable {
    var user: String?
    var device: String
    var revocation: Revocation
}

/// The two requests a revoked device sends before it stops (`docs/fleet.md#revoking-access`): the
/// deposit of its queued changes in escrow, and the receipt of its wipe. Each is about the device
/// that sends it, signed in as the user it last synced as, and bounded in size.
struct EscrowEndpoints: Sendable {
    let fleet: Fleet

    /// `POST /devices/{id}/escrow` with an ``EscrowDeposit``: 200 with an ``EscrowDepositAnswer``.
    @Sendable func deposit(_ request: Request, _ caller: RevokedCaller) async throws(TableError) -> Response {
        let deposit: EscrowDeposit = try await body(
            request, caller, limit: EscrowDeposit.maximumBytes,
            otherwise:
                #"The body is not a deposit: {"operations": [{"operationID", "table", "operation", "itemID", "item", "queuedAt"}]}."#
        )
        guard deposit.operations.count <= EscrowDeposit.maximumOperations else {
            throw .tooLarge(
                "A deposit holds at most \(EscrowDeposit.maximumOperations) operations; send the rest in another.")
        }
        for operation in deposit.operations {
            guard ["insert", "update", "delete"].contains(operation.operation) else {
                throw .invalidRequest("The operation '\(operation.operation)' is not insert, update or delete.")
            }
            guard TableService.isValidTableName(operation.table), !operation.itemID.isEmpty,
                operation.itemID.utf8.count <= 255
            else {
                throw .invalidRequest("Operation \(operation.operationID) names no valid table or item id.")
            }
        }
        let answer = try await fleet.escrow.deposit(deposit, device: caller.device, user: caller.user)
        if answer.held > 0 {
            fleet.logger.notice(
                "device \(caller.device) deposited \(answer.held) changes in escrow (\(answer.alreadyHeld) held already)"
            )
        }
        return try Self.json(answer)
    }

    /// `POST /devices/{id}/wipe-receipt` with a ``WipeReceipt``: 201.
    @Sendable func receipt(_ request: Request, _ caller: RevokedCaller) async throws(TableError) -> Response {
        let receipt: WipeReceipt = try await body(
            request, caller, limit: WipeReceipt.maximumBytes,
            otherwise: #"The body is not a receipt: {"wipedAt", "purged": {"table": ["id", …]}, "escrowed"}."#)
        guard ProtocolDate.parse(receipt.wipedAt) != nil else {
            throw .invalidRequest("wipedAt '\(receipt.wipedAt)' is not an ISO 8601 time.")
        }
        try await fleet.escrow.saveReceipt(receipt, device: caller.device, user: caller.user)
        fleet.logger.notice(
            "device \(caller.device) wiped its copy: \(receipt.purged.values.reduce(0) { $0 + $1.count }) rows")
        var response = try Self.json(["received": true])
        response.status = .created
        return response
    }

    /// The body of a request about the device that sends it, as the user it synced as, within
    /// `limit` bytes, decoded; `otherwise`: the 400's message when it is not a `Body`.
    private func body<Body: Decodable>(
        _ request: Request, _ caller: RevokedCaller, limit: Int, otherwise: String
    ) async throws(TableError) -> Body {
        guard request.parameters["id"] == caller.device else {
            throw .otherDevice(
                "A device deposits its own changes only: X-ZUMO-INSTALLATION-ID must be the device in the address.")
        }
        await fleet.loadIfNeeded()
        let lastUser = fleet.state.withLock { $0.devices[caller.device]?.user }
        if let lastUser, lastUser != caller.user {
            throw .otherDevice(
                "The device \(caller.device) synced as another user: only that user's token may deposit its changes.")
        }
        guard request.body.count <= limit else {
            throw .tooLarge("The body is over \(limit >> 20) MB: send fewer operations at a time.")
        }
        do {
            return try JSONDecoder().decode(Body.self, from: request.body)
        } catch {
            throw .invalidRequest(otherwise)
        }
    }

    private static func json(_ value: some Encodable) throws(TableError) -> Response {
        do {
            return .json(data: try JSONEncoder().encode(value))
        } catch {
            throw .storage(.other("The answer could not be encoded: \(error)"))
        }
    }
}
