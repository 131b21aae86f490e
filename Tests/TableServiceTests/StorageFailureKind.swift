@testable import TableService

/// The case of a ``TableStorageFailure`` without its detail (the database's own words), for
/// tables of expected failures. Exhaustive: a new case has to be added here, and to the tables.
enum StorageFailureKind: String, Sendable, CaseIterable {
    case duplicateID, queryTooComplex, unavailable, tooLarge, corrupt, keptChanging, notDurable, other

    init(_ failure: TableStorageFailure) {
        switch failure {
        case .duplicateID: self = .duplicateID
        case .queryTooComplex: self = .queryTooComplex
        case .unavailable: self = .unavailable
        case .tooLarge: self = .tooLarge
        case .corrupt: self = .corrupt
        case .keptChanging: self = .keptChanging
        case .notDurable: self = .notDurable
        case .other: self = .other
        }
    }

    /// The kind of storage failure a store call threw, `nil` for any other error.
    init?(thrownBy error: any Error) {
        guard case .storage(let failure) = error as? TableError else { return nil }
        self.init(failure)
    }
}
