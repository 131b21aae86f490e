import Foundation
import HTTPTypes
import Synchronization

/// Serves the files of one folder (the project's `Public/`), for a route ending in `*`.
///
/// Answers with a content type by extension, a strong `ETag` (304 when `If-None-Match` matches)
/// and `Cache-Control`. Anything that would leave the folder — `..`, an encoded `/`, a symlink
/// pointing outside — and hidden files are answered 404, exactly like a missing file.
public final class StaticFiles: Sendable {
    private struct CachedFile {
        let path: String
        let modified: timespec
        let size: Int
        let contents: Data
        let etag: String
        let contentType: String
    }

    private let root: String
    private let cacheControl: String
    private let cache = Mutex<[String: CachedFile]>([:])

    /// - Parameters:
    ///   - folder: the folder to serve; it must exist.
    ///   - maxAge: seconds browsers may reuse a file before revalidating it.
    public init(folder: URL, maxAge: Int = 300) {
        root = folder.resolvingSymlinksInPath().path
        cacheControl = "public, max-age=\(maxAge)"
    }

    /// The handler: serves `request.parameters["*"]` from the folder.
    public func respond(_ request: Request) throws(HTTPError) -> Response {
        guard let relative = request.parameters["*"] else { throw .notFound() }
        let file = try load(relative)
        var headers: HTTPFields = [
            .contentType: file.contentType,
            .eTag: file.etag,
            .cacheControl: cacheControl,
        ]
        if let tags = request.headers[.ifNoneMatch],
            tags.split(separator: ",").contains(where: { $0.trimmingCharacters(in: .whitespaces) == file.etag })
        {
            headers[.contentType] = nil
            return Response(status: .notModified, headers: headers)
        }
        return Response(status: .ok, headers: headers, body: file.contents)
    }

    /// The real path of a file inside the folder, or nil when the request tries to leave it.
    private func resolve(_ relative: String) -> String? {
        let segments = relative.split(separator: "/", omittingEmptySubsequences: false)
        for segment in segments {
            if segment.isEmpty || segment.hasPrefix(".") || segment.contains("\\") || segment.contains("\0") {
                return nil
            }
        }
        guard let real = realpath(root + "/" + relative, nil) else { return nil }
        defer { free(real) }
        let path = String(cString: real)
        return path.hasPrefix(root + "/") ? path : nil
    }

    /// The file for a relative path: from the cache while its size and modification time are
    /// unchanged (one `stat`), else resolved and read again.
    private func load(_ relative: String) throws(HTTPError) -> CachedFile {
        var info = stat()
        if let cached = cache.withLock({ $0[relative] }) {
            if stat(cached.path, &info) == 0, cached.size == Int(info.st_size),
                cached.modified.tv_sec == info.st_mtim.tv_sec, cached.modified.tv_nsec == info.st_mtim.tv_nsec
            {
                return cached
            }
            cache.withLock { $0[relative] = nil }
        }
        guard let path = resolve(relative), stat(path, &info) == 0, info.st_mode & S_IFMT == S_IFREG else {
            throw .notFound()
        }
        guard let contents = FileManager.default.contents(atPath: path) else { throw .notFound() }
        let stamp = UInt64(info.st_mtim.tv_sec) &* 1_000_000_000 &+ UInt64(info.st_mtim.tv_nsec)
        let file = CachedFile(
            path: path, modified: info.st_mtim, size: Int(info.st_size), contents: contents,
            etag: "\"\(String(contents.count, radix: 16))-\(String(stamp, radix: 16))\"",
            contentType: Self.contentType(of: path))
        cache.withLock { $0[relative] = file }
        return file
    }

    static func contentType(of path: String) -> String {
        switch path.split(separator: ".").last?.lowercased() ?? "" {
        case "html", "htm": "text/html; charset=utf-8"
        case "css": "text/css; charset=utf-8"
        case "js", "mjs": "text/javascript; charset=utf-8"
        case "json", "map": "application/json"
        case "webmanifest": "application/manifest+json"
        case "svg": "image/svg+xml"
        case "png": "image/png"
        case "jpg", "jpeg": "image/jpeg"
        case "gif": "image/gif"
        case "ico": "image/x-icon"
        case "webp": "image/webp"
        case "woff2": "font/woff2"
        case "woff": "font/woff"
        case "txt": "text/plain; charset=utf-8"
        default: "application/octet-stream"
        }
    }
}
