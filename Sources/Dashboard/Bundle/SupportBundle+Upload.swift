import Foundation
import Logging
import SyncClient

extension SupportBundle {
    /// Makes this device's redacted bundle, as `write` does, and uploads it to the service whose
    /// admin asked for it (``SyncContext/uploadSupportBundle(_:)``); a failure is logged, and the
    /// service asks again with its next answer.
    public static func upload(
        _ context: SyncContext, settings: Settings, secrets: [String?], madeBy: String, version: String,
        logger: Logger
    ) async {
        let file = FileManager.default.temporaryDirectory
            .appendingPathComponent("todosync-requested-bundle-\(UUID().uuidString).zip")
        defer { try? FileManager.default.removeItem(at: file) }
        do {
            try write(context, settings: settings, secrets: secrets, madeBy: madeBy, version: version, to: file)
            try await context.uploadSupportBundle(try Data(contentsOf: file))
            logger.notice("the service asked for this device's support bundle: sent (no key, no token in it)")
        } catch {
            logger.warning("the service asked for this device's support bundle, which could not be sent: \(error)")
        }
    }
}
