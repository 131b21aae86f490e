import Foundation

/// Where the `Public/` and `Templates/` folders are.
///
/// Given folders win; otherwise the first folder that has both, searching upwards from the
/// executable (`.build/release/todosync` → the checkout), then from the working directory.
public struct ResourceFolders: Sendable, Equatable {
    public let publicFolder: URL
    public let templatesFolder: URL

    public init(publicFolder: URL, templatesFolder: URL) {
        self.publicFolder = publicFolder
        self.templatesFolder = templatesFolder
    }

    /// Finds the folders, preferring explicit paths (from flags) when given.
    public static func locate(
        publicDir: String? = nil, templatesDir: String? = nil
    ) throws(ResourceError) -> ResourceFolders {
        let root = searchRoots().first { root in
            ["Public", "Templates"].allSatisfy { isDirectory(root.appendingPathComponent($0)) }
        }
        let publicFolder = publicDir.map { URL(fileURLWithPath: $0) } ?? root?.appendingPathComponent("Public")
        let templatesFolder = templatesDir.map { URL(fileURLWithPath: $0) } ?? root?.appendingPathComponent("Templates")
        guard let publicFolder, isDirectory(publicFolder) else {
            throw .notFound(kind: "Public", flag: "--public-dir", tried: publicDir)
        }
        guard let templatesFolder, isDirectory(templatesFolder) else {
            throw .notFound(kind: "Templates", flag: "--templates-dir", tried: templatesDir)
        }
        return ResourceFolders(publicFolder: publicFolder, templatesFolder: templatesFolder)
    }

    private static func searchRoots() -> [URL] {
        var roots: [URL] = []
        var folder = URL(fileURLWithPath: CommandLine.arguments.first ?? ".").resolvingSymlinksInPath()
            .deletingLastPathComponent()
        if let executable = Bundle.main.executableURL?.resolvingSymlinksInPath() {
            folder = executable.deletingLastPathComponent()
        }
        for _ in 0..<6 {
            roots.append(folder)
            folder = folder.deletingLastPathComponent()
        }
        roots.append(URL(fileURLWithPath: FileManager.default.currentDirectoryPath))
        return roots
    }

    private static func isDirectory(_ url: URL) -> Bool {
        var isDirectory: ObjCBool = false
        return FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory) && isDirectory.boolValue
    }
}

/// A resource folder that cannot be found.
public enum ResourceError: Error, CustomStringConvertible, Equatable {
    case notFound(kind: String, flag: String, tried: String?)

    public var description: String {
        switch self {
        case .notFound(let kind, let flag, let tried?):
            "The \(kind) folder '\(tried)' does not exist. Check the path given to \(flag)."
        case .notFound(let kind, let flag, nil):
            "Cannot find the \(kind) folder next to the executable or in the current directory. Pass \(flag) with its path."
        }
    }
}
