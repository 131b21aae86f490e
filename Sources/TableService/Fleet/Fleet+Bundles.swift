import Foundation

/// Remote diagnosis: an admin asks for a device's support bundle; the device's todosync client
/// uploads it on its next request (`POST /devices/{id}/bundle`); the admin downloads it.
extension Fleet {
    /// The largest bundle taken.
    static let bundleLimit = 32 << 20

    /// Why an upload is refused; each names what the device can do.
    enum BundleRefusal: Error, Equatable {
        case notAsked
        case notAZip
        case tooLarge
    }

    /// Asks for the bundle of `id`; false when the device was never seen.
    func requestBundle(_ id: String) async -> Bool {
        guard await records().contains(where: { $0.id == id }) else { return false }
        let now = clock()
        // An admin's request is not the device's contact: its last contact stays.
        state.withLock { state in
            state.devices[id]?.bundleRequestedAt = now
            state.unsaved.insert(id)
        }
        await save()
        return true
    }

    /// Keeps `zip` as the bundle of `id`, which an admin asked for.
    func acceptBundle(_ id: String, _ zip: Data) async throws(BundleRefusal) {
        await loadIfNeeded()
        guard bundlePending(id) else { throw .notAsked }
        guard zip.count <= Self.bundleLimit else { throw .tooLarge }
        guard zip.starts(with: [0x50, 0x4B, 0x03, 0x04]) else { throw .notAZip }
        let now = clock()
        do {
            try await store.execute([
                SQLStatement(sql: "DELETE FROM \"__device_bundles\" WHERE \"device\" = ?", values: [.text(id)]),
                SQLStatement(
                    sql: "INSERT INTO \"__device_bundles\" (\"device\", \"receivedAt\", \"zip\") VALUES (?, ?, ?)",
                    values: [.text(id), .integer(now), .text(zip.base64EncodedString())]),
            ])
        } catch {
            logger.warning("the support bundle of \(id) could not be kept: \(error)")
            throw .notAsked
        }
        update(id, at: now) { $0.bundleReceivedAt = now }
        await save()
    }

    /// The bundle `id` uploaded last, with when.
    func bundle(_ id: String) async -> (zip: Data, receivedAt: Int64)? {
        let rows = try? await store.query(
            SQLStatement(
                sql: "SELECT \"zip\", \"receivedAt\" FROM \"__device_bundles\" WHERE \"device\" = ?",
                values: [.text(id)]))
        guard let row = rows?.first, let text = try? row.text("zip"), let zip = Data(base64Encoded: text),
            let at = try? row.integer("receivedAt")
        else { return nil }
        return (zip, at)
    }
}
