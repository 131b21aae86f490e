import GRDB
import Storage

/// Why the local SQLite store failed: a closed set of kinds the caller can act on, with SQLite's
/// result code and words kept for logs.
public struct StoreFailure: Error, Sendable, Hashable, CustomStringConvertible {
    /// What kind of trouble the store met.
    public enum Kind: String, Sendable, Hashable, Codable {
        /// The file could not be opened or created.
        case cannotOpen
        /// The file could not be brought to this version's schema.
        case migrationFailed
        /// Another connection held the file for too long.
        case busy
        /// The disk (or the file's quota) is full.
        case diskFull
        /// The file or its folder cannot be written.
        case readOnly
        /// The file is damaged or is not a SQLite database.
        case corrupt
        /// A write broke one of the store's rules (a duplicate key...).
        case constraint
        /// Any other SQLite failure.
        case other
    }

    /// What kind of trouble it was.
    public var kind: Kind
    /// SQLite's extended result code, when SQLite reported it.
    public var code: Int32?
    /// SQLite's (or the opener's) own words.
    public var detail: String

    /// A failure of the given kind.
    public init(kind: Kind, code: Int32? = nil, detail: String) {
        self.kind = kind
        self.code = code
        self.detail = detail
    }

    /// The failure behind an error thrown by GRDB or the store opener.
    init(_ error: any Error) {
        switch error {
        case let failure as StoreFailure:
            self = failure
        case let error as DatabaseError:
            let kind: Kind =
                switch error.resultCode.primaryResultCode {
                case .SQLITE_BUSY, .SQLITE_LOCKED: .busy
                case .SQLITE_FULL: .diskFull
                case .SQLITE_READONLY, .SQLITE_PERM, .SQLITE_CANTOPEN, .SQLITE_AUTH: .readOnly
                case .SQLITE_CORRUPT, .SQLITE_NOTADB: .corrupt
                case .SQLITE_CONSTRAINT: .constraint
                default: .other
                }
            self.init(
                kind: kind, code: error.extendedResultCode.rawValue, detail: error.message ?? "\(error.resultCode)")
        case let error as StorageError:
            switch error {
            case .cannotOpen: self.init(kind: .cannotOpen, detail: error.description)
            case .migrationFailed: self.init(kind: .migrationFailed, detail: error.description)
            }
        default:
            self.init(kind: .other, detail: String(describing: error))
        }
    }

    /// What happened and what the user can do.
    public var description: String {
        switch kind {
        case .cannotOpen, .migrationFailed:
            detail
        case .busy:
            "The local store is busy (another program holds it: \(detail)). Close the other program and try again."
        case .diskFull:
            "The local store cannot grow: the disk is full. Free some space and try again."
        case .readOnly:
            "The local store cannot be written (\(detail)). Check the file's and its folder's permissions."
        case .corrupt:
            "The local store is damaged (\(detail)). Restore it from a copy, or start a new store and sync again."
        case .constraint:
            "The local store refused a write (\(detail)). Reload and try again."
        case .other:
            "The local store failed (\(detail)). Check the disk and the file's permissions."
        }
    }
}
