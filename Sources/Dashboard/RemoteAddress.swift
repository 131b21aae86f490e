import Foundation

/// A table service's address: an `http` or `https` URL with a host, such as `http://127.0.0.1:8090`.
///
/// The one rule for every place that takes an address: the Settings form, `POST /api/settings`,
/// `/doctor`, and the commands' `--remote` (`todosync`, `todosync client`) and `todosync doctor URL`.
public struct RemoteAddress: Sendable, Hashable, CustomStringConvertible {
    /// The address, as typed (surrounding spaces removed).
    public let url: URL

    /// Reads `text`; anything but an http(s) address with a host is ``Invalid``.
    public init(_ text: String) throws(Invalid) {
        let text = text.trimmingCharacters(in: .whitespaces)
        guard let url = URL(string: text), ["http", "https"].contains(url.scheme?.lowercased() ?? ""),
            url.host?.isEmpty == false
        else { throw Invalid(text: text) }
        self.url = url
    }

    public var description: String { url.absoluteString }

    /// Text that is not a table service's address.
    public struct Invalid: Error, Sendable, CustomStringConvertible {
        /// What was given.
        public var text: String

        /// What is wrong and how to write it.
        public var description: String {
            "“\(text)” is not a web address; write it like http://127.0.0.1:8090."
        }
    }
}
