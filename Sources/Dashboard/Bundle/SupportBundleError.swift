import Foundation

/// Why a support bundle could not be written or opened; each names the file.
public enum SupportBundleError: Error, CustomStringConvertible, Equatable {
    /// The file is not a todosync support bundle (another kind of file, or a ZIP without a manifest).
    case notABundle(file: String, reason: String)
    /// The file was cut short (or damaged) on its way: a ZIP without its end, or an entry whose check fails.
    case truncated(file: String)
    /// The bundle was made by a newer todosync, whose format this one does not know.
    case newerVersion(file: String, version: Int)
    /// The file cannot be read.
    case cannotRead(file: String, reason: String)
    /// The bundle cannot be written (nothing was).
    case cannotWrite(file: String, reason: String)

    public var description: String {
        switch self {
        case .notABundle(let file, let reason):
            "\(file) is not a todosync support bundle (\(reason)); make one with `todosync client bundle --out FILE` "
                + "or Settings → Export support bundle."
        case .truncated(let file):
            "\(file) is truncated or damaged: it ends before the bundle does. Ask for the file again, whole."
        case .newerVersion(let file, let version):
            "\(file) was made by a newer todosync (bundle format \(version); this one reads up to "
                + "\(SupportBundle.formatVersion)). Open it with that version or a later one."
        case .cannotRead(let file, let reason):
            "cannot read \(file): \(reason)"
        case .cannotWrite(let file, let reason):
            "cannot write \(file): \(reason); nothing was written."
        }
    }
}
