import Foundation
import Storage

/// The secrets a store's remote needs: the application key and the signed-in user's token.
struct Credentials: Codable, Equatable, Sendable {
    var applicationKey: String?
    var authToken: String?

    var isEmpty: Bool { applicationKey == nil && authToken == nil }
}

/// Where a store keeps its ``Credentials``: `<store>.credentials` beside it, readable by its owner
/// only (0600), replaced durably. Never inside the store, so that a store copied for a bug report
/// (or a bundle made from it) carries no secret.
struct CredentialsFile: Sendable {
    let url: URL

    init(store path: String) {
        url = URL(fileURLWithPath: path + ".credentials")
    }

    /// What the file holds; nothing when there is no file.
    func load() throws(SyncError) -> Credentials {
        guard let data = FileManager.default.contents(atPath: url.path) else { return Credentials() }
        do { return try JSONDecoder().decode(Credentials.self, from: data) } catch {
            throw .storage(
                StoreFailure(
                    kind: .corrupt,
                    detail: "the credentials file \(url.path) is not readable JSON; remove it and give the "
                        + "application key and the sign-in token again"))
        }
    }

    /// Replaces the file with `credentials` (removes it when they are empty).
    func save(_ credentials: Credentials) throws(SyncError) {
        guard !credentials.isEmpty else {
            if unlink(url.path) != 0, errno != ENOENT {
                throw .storage(
                    StoreFailure(kind: .readOnly, detail: "the credentials file \(url.path) cannot be removed"))
            }
            return
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        do {
            try DurableFile.write(try encoder.encode(credentials), to: url)
        } catch {
            throw .storage(StoreFailure(kind: .readOnly, detail: "the credentials file cannot be saved: \(error)"))
        }
    }
}
