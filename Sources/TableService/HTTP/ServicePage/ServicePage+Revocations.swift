import Foundation
import HTTPServer
import HTTPTypes

/// The admin's revocations (`docs/fleet.md#revoking-access`): revoke one user's or one device's
/// access, undo it, list what is in force. Behind the admin API's access, like the fleet's.
extension ServicePage {
    func addRevocationRoutes(to router: inout Router) {
        for kind in [Revocation.Kind.user, .device] {
            let path = base + "/api/\(kind.rawValue)s/:subject"
            router.post(path + "/revoke") { request in
                await self.api(request) { try await self.revoke(kind, request) }
            }
            router.post(path + "/restore-access") { request in
                await self.api(request) {
                    let subject = try Self.subject(kind, request)
                    guard try await self.fleet.revocations.restore(kind, subject) else {
                        throw HTTPError(
                            .notFound, "The \(kind.rawValue) '\(subject)' has no revoked access to restore.")
                    }
                    return try Self.json(["restored": subject])
                }
            }
        }
        router.get(base + "/api/revocations") { request in
            await self.api(request) { try Self.json(RevocationsAnswer(revocations: self.fleet.revocations.all())) }
        }
    }

    private struct RevocationsAnswer: Encodable {
        var revocations: [Revocation]
    }

    /// `{"wipe": true|false}` (an empty body: false).
    private struct RevokeBody: Decodable {
        var wipe: Bool?
    }

    private func revoke(_ kind: Revocation.Kind, _ request: Request) async throws -> Response {
        let subject = try Self.subject(kind, request)
        let body: RevokeBody
        do {
            body = request.body.isEmpty ? RevokeBody() : try JSONDecoder().decode(RevokeBody.self, from: request.body)
        } catch {
            throw HTTPError(.badRequest, #"The body is not {"wipe": true} or {"wipe": false}."#)
        }
        guard try await isKnown(kind, subject) else {
            throw HTTPError(
                .notFound,
                kind == .user
                    ? "No user '\(subject)' is known here: no rows of theirs and no token of theirs seen. Check the id."
                    : "No device '\(subject)' has been seen. Check the id on the devices page.")
        }
        let revocation = Revocation(kind: kind, subject: subject, wipe: body.wipe ?? false, revokedAt: fleet.clock())
        try await fleet.revocations.revoke(revocation)
        return try Self.json(revocation)
    }

    /// Whether the service knows `subject`: a device it has seen; a user whose token it has seen or
    /// who owns rows of a per-user table.
    private func isKnown(_ kind: Revocation.Kind, _ subject: String) async throws -> Bool {
        switch kind {
        case .device:
            return await fleet.report(id: subject) != nil
        case .user:
            if fleet.state.withLock({ $0.devices.values.contains { $0.user == subject } }) { return true }
            for table in fleet.perUserTables {
                guard let schema = try await store.knownSchema(of: table) else { continue }
                let rows = try await store.query(
                    SQLStatement(
                        sql:
                            "SELECT 1 FROM \(SQLDialect.quoted(schema.name)) WHERE \"\(RowScope.ownerColumn)\" = ? LIMIT 1",
                        values: [.text(subject)]))
                if !rows.isEmpty { return true }
            }
            return false
        }
    }

    private static func subject(_ kind: Revocation.Kind, _ request: Request) throws(HTTPError) -> String {
        let subject = request.parameters["subject"] ?? ""
        guard !subject.isEmpty, subject.utf8.count <= 255, !subject.contains(where: \.isNewline) else {
            throw HTTPError(.badRequest, "Give the \(kind.rawValue)'s id in the address.")
        }
        if kind == .device {
            do { return try DeviceIdentity.checkedID(subject) } catch { throw HTTPError(.badRequest, error.message) }
        }
        return subject
    }
}
