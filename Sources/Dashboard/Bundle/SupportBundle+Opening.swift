import Foundation
import ZIPFoundation

extension SupportBundle {
    /// A bundle unpacked into a folder of its own, ready for a read-only dashboard.
    public struct Opened: Sendable {
        public let manifest: Manifest
        public let settings: Settings
        /// Holds `store.sqlite` (a copy: the dashboard may open it as it opens any store).
        public let folder: URL
    }

    /// Checks `file` and unpacks it into a new folder under `parent` (the temporary folder by
    /// default). Nothing is left behind when it fails.
    ///
    /// - Throws: ``SupportBundleError``: not a bundle, truncated, from a newer version, unreadable.
    public static func open(_ file: URL, under parent: URL? = nil) throws(SupportBundleError) -> Opened {
        let name = file.path
        let fileManager = FileManager.default
        guard fileManager.isReadableFile(atPath: name) else {
            throw .cannotRead(file: name, reason: "no such file, or it may not be read")
        }
        let archive: Archive
        do {
            archive = try Archive(url: file, accessMode: .read)
        } catch {
            // A ZIP starts with a local file header: a file that does and has no end was cut short.
            let head = (try? FileHandle(forReadingFrom: file).read(upToCount: 4)) ?? Data()
            if head == Data([0x50, 0x4B, 0x03, 0x04]) { throw .truncated(file: name) }
            throw .notABundle(file: name, reason: "it is not a ZIP file")
        }
        let manifestData = try entryData(manifestEntry, of: archive, file: name)
        guard let manifestJSON = try? JSONSerialization.jsonObject(with: manifestData) as? [String: Any],
            manifestJSON["format"] as? String == formatName
        else {
            throw .notABundle(file: name, reason: "its manifest.json does not name the format \(formatName)")
        }
        if let version = manifestJSON["formatVersion"] as? Int, version > formatVersion {
            throw .newerVersion(file: name, version: version)
        }
        let manifest: Manifest
        let settings: Settings
        do {
            manifest = try decoder.decode(Manifest.self, from: manifestData)
            settings = try decoder.decode(Settings.self, from: try entryData(settingsEntry, of: archive, file: name))
        } catch let error as SupportBundleError {
            throw error
        } catch {
            throw .notABundle(file: name, reason: "its manifest or settings cannot be read: \(error)")
        }
        let folder = (parent ?? fileManager.temporaryDirectory)
            .appendingPathComponent("todosync-open-bundle-\(UUID().uuidString)")
        do {
            try fileManager.createDirectory(at: folder, withIntermediateDirectories: true)
            guard let store = archive[storeEntry] else {
                throw SupportBundleError.notABundle(file: name, reason: "it has no \(storeEntry)")
            }
            let storeURL = folder.appendingPathComponent(storeEntry)
            do {
                _ = try archive.extract(store, to: storeURL)
            } catch {
                throw SupportBundleError.truncated(file: name)
            }
            let head = try FileHandle(forReadingFrom: storeURL).read(upToCount: 16) ?? Data()
            guard head == Data("SQLite format 3\0".utf8) else {
                throw SupportBundleError.notABundle(file: name, reason: "its \(storeEntry) is not an SQLite database")
            }
            return Opened(manifest: manifest, settings: settings, folder: folder)
        } catch {
            try? fileManager.removeItem(at: folder)
            if let error = error as? SupportBundleError { throw error }
            throw .cannotRead(file: name, reason: "\(error)")
        }
    }

    /// The bytes of one small entry (the manifest, the settings), its CRC-32 checked.
    private static func entryData(
        _ path: String, of archive: Archive, file: String
    ) throws(SupportBundleError)
        -> Data
    {
        guard let entry = archive[path] else { throw .notABundle(file: file, reason: "it has no \(path)") }
        guard entry.uncompressedSize <= 16 << 20 else {
            throw .notABundle(file: file, reason: "its \(path) is larger than a bundle's")
        }
        var data = Data()
        do {
            _ = try archive.extract(entry) { data.append($0) }
        } catch {
            throw .truncated(file: file)
        }
        return data
    }
}
