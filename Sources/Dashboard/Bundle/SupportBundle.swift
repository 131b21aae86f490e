import Foundation
import SyncClient
import SyncProtocol
import ZIPFoundation

/// A support bundle: one file with what someone helping a user needs to see their device as they
/// do — a consistent snapshot of the store (rows, queue, conflicts, journal and the flight
/// recorder's `__exchanges`), the settings, and versions — with the application key, the sign-in
/// token, cookies and any JWT-looking value removed. `todosync open-bundle` serves it read-only.
///
/// The container is a ZIP (through ZIPFoundation) rather than a format of our own: anyone can list
/// and read it with `unzip`, and the ZIP's central directory at the end and the CRC-32 of each
/// entry tell a truncated file from a whole one. It holds:
///
/// - `manifest.json` — ``Manifest``: the format's name and version, versions, what the store holds.
/// - `settings.json` — ``Settings`` (no secrets).
/// - `store.sqlite` — the redacted snapshot (see ``SyncClient/SyncContext/writeRedactedSnapshot(to:removing:)``).
public enum SupportBundle {
    /// The `format` of every bundle's manifest.
    public static let formatName = "todosync-support-bundle"
    /// The newest format this todosync writes and reads.
    public static let formatVersion = 1
    /// What the bundle never holds.
    public static let removed = [
        "application key", "sign-in token", "cookies", "credential headers", "JWT-looking values",
    ]

    static let manifestEntry = "manifest.json"
    static let settingsEntry = "settings.json"
    static let storeEntry = "store.sqlite"

    /// What a bundle says about itself (`manifest.json`).
    public struct Manifest: Codable, Sendable, Equatable {
        public var format: String
        public var formatVersion: Int
        public var createdAt: Date
        /// The todosync that made it.
        public var todosyncVersion: String
        /// The operating system it was made on.
        public var operatingSystem: String
        /// `dashboard` or `client` (the command that made it).
        public var madeBy: String
        /// What the store snapshot holds.
        public var store: StoreSnapshot
        /// What was taken out before writing.
        public var removed: [String]
    }

    /// The settings of the device, without secrets (`settings.json`).
    public struct Settings: Codable, Sendable, Equatable {
        /// The remote service; nil for the dashboard's embedded one.
        public var remoteURL: String?
        public var pageSize: Int?
        public var pushWindow: Int?
        public var tableProtocol: ProtocolChoice?
        public var syncedTables: [String]
        public var offline: Bool
        /// Whether an application key was set (its value is not in the bundle).
        public var applicationKeyWasSet: Bool
        /// Whether a sign-in token was set (its value is not in the bundle).
        public var signInTokenWasSet: Bool

        public init(
            remoteURL: String?, pageSize: Int?, pushWindow: Int?, tableProtocol: ProtocolChoice?,
            syncedTables: [String], offline: Bool, applicationKeyWasSet: Bool, signInTokenWasSet: Bool
        ) {
            self.remoteURL = remoteURL
            self.pageSize = pageSize
            self.pushWindow = pushWindow
            self.tableProtocol = tableProtocol
            self.syncedTables = syncedTables
            self.offline = offline
            self.applicationKeyWasSet = applicationKeyWasSet
            self.signInTokenWasSet = signInTokenWasSet
        }
    }

    /// Writes a bundle of `context` to `file`, replacing it only when the whole bundle is written.
    ///
    /// - Parameters:
    ///   - secrets: values to remove besides those the store holds (such as a key given on the
    ///     command line or kept in the dashboard's settings).
    ///   - version: the todosync version, for the manifest.
    /// - Throws: ``SupportBundleError/cannotWrite(file:reason:)``; then `file` is as it was.
    @discardableResult
    public static func write(
        _ context: SyncContext, settings: Settings, secrets: [String?], madeBy: String, version: String, to file: URL
    ) throws(SupportBundleError) -> Manifest {
        let fileManager = FileManager.default
        var isFolder: ObjCBool = false
        let folder = file.deletingLastPathComponent().path
        guard fileManager.fileExists(atPath: folder, isDirectory: &isFolder), isFolder.boolValue else {
            throw .cannotWrite(file: file.path, reason: "the folder \(folder) does not exist")
        }
        let scratch = fileManager.temporaryDirectory.appendingPathComponent("todosync-bundle-\(UUID().uuidString)")
        defer { try? fileManager.removeItem(at: scratch) }
        do {
            try fileManager.createDirectory(at: scratch, withIntermediateDirectories: true)
            let storeURL = scratch.appendingPathComponent(storeEntry)
            let snapshot = try context.writeRedactedSnapshot(to: storeURL.path, removing: secrets.compactMap { $0 })
            let manifest = Manifest(
                format: formatName, formatVersion: formatVersion, createdAt: Date(), todosyncVersion: version,
                operatingSystem: ProcessInfo.processInfo.operatingSystemVersionString, madeBy: madeBy,
                store: snapshot, removed: removed)
            // Beside the destination, so that the rename at the end is atomic.
            let partial = file.deletingLastPathComponent()
                .appendingPathComponent(".\(file.lastPathComponent).\(UUID().uuidString).partial")
            defer { try? fileManager.removeItem(at: partial) }
            try archive(
                [(manifestEntry, try encoder.encode(manifest)), (settingsEntry, try encoder.encode(settings))],
                store: storeURL, to: partial)
            if fileManager.fileExists(atPath: file.path) {
                _ = try fileManager.replaceItemAt(file, withItemAt: partial)
            } else {
                try fileManager.moveItem(at: partial, to: file)
            }
            return manifest
        } catch {
            throw .cannotWrite(
                file: file.path, reason: (error as? SyncError)?.description ?? error.localizedDescription)
        }
    }

    /// Writes a ZIP of `entries` (in order) and, when given, the store file as `store.sqlite`.
    static func archive(_ entries: [(String, Data)], store: URL?, to file: URL) throws {
        let archive = try Archive(url: file, accessMode: .create)
        for (name, data) in entries {
            try archive.addEntry(
                with: name, type: .file, uncompressedSize: Int64(data.count), compressionMethod: .deflate
            ) { position, size in
                data.subdata(in: Int(position)..<Int(position) + size)
            }
        }
        if let store { try archive.addEntry(with: storeEntry, fileURL: store, compressionMethod: .deflate) }
    }

    static let encoder = JSONEncoder.todosync(pretty: true)
    static let decoder = JSONDecoder.todosync()
}
