import Foundation
import Views

/// The project's own folders, found from this file's path (never from the current directory).
public enum ProjectResources {
    /// The package's root folder.
    public static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// `Templates/`, the pages' templates.
    public static let templatesFolder = root.appendingPathComponent("Templates")

    /// `Public/`, the dashboard's static files.
    public static let publicFolder = root.appendingPathComponent("Public")

    /// Both, as the dashboard takes them.
    public static var folders: ResourceFolders {
        ResourceFolders(publicFolder: publicFolder, templatesFolder: templatesFolder)
    }
}
