import Foundation

extension JSONEncoder {
    /// How todosync writes JSON that people and scripts read (`--json`, the dashboard's JSON answers,
    /// support bundles, saved summaries): keys sorted, slashes left alone, dates in ISO 8601;
    /// `pretty` indents it.
    public static func todosync(pretty: Bool = false) -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting =
            pretty ? [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes] : [.sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .iso8601
        return encoder
    }
}

extension JSONDecoder {
    /// Reads what ``JSONEncoder/todosync(pretty:)`` writes.
    public static func todosync() -> JSONDecoder {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return decoder
    }
}
