import Foundation
import HTTPTypes
import SyncProtocol
@_spi(Testing) import TableService
import Testing

/// The service's answers for the movies table have the shapes of the official golden OpenAPI
/// document (`Fixtures/DatasyncV3/openapi.json`: its page and entity schemas), and the service
/// describes its own tables at `/openapi.json`.
@Suite("Datasync v3 OpenAPI shapes")
struct DatasyncOpenAPITests {
    @Test(
        "Movies answers match the golden page and entity shapes and the service's own description",
        arguments: Backend.all)
    func moviesAnswersMatchTheGoldenShapes(_ backend: Backend) async throws {
        let golden = try JSONDecoder().decode(JSONValue.self, from: DatasyncFixtures.data("openapi.json"))
        let schema = try DatasyncFixtures.schema()
        try await withTestServer(backend, configure: { $0.schema = schema }) { server in
            let v3 = DatasyncFixtures.v3
            for movie in try DatasyncFixtures.rows("movies.json").prefix(30) {
                _ = try await server.send(.post, "/tables/movies", json: movie, headers: v3)
            }
            let ours = try JSONDecoder().decode(JSONValue.self, from: try await server.send(.get, "/openapi.json").body)
            #expect(ours.objectValue?["openapi"] == "3.1.1")
            let paths = try #require(ours.objectValue?["paths"]?.objectValue)
            #expect(paths["/tables/movies"] != nil && paths["/tables/movies/{id}"] != nil)

            // The golden page (TodoItemPage) with its items as the golden entity's system fields plus
            // the movie columns as this service describes them.
            let validator = ShapeValidator(documents: [golden, ours])
            let page = try #require(validator.resolve("#/components/schemas/TodoItemPage", in: golden))
            let goldenEntity = try #require(validator.resolve("#/components/schemas/TodoItem", in: golden))
            var movie = try #require(validator.resolve("#/components/schemas/movies", in: ours))
            var movieProperties = try #require(movie["properties"]?.objectValue)
            for (key, value) in try #require(goldenEntity["properties"]?.objectValue) where key != "title" {
                movieProperties[key] = value
            }
            #expect(Set(movieProperties.keys).isSuperset(of: ["rating", "releaseDate", "year", "bestPictureWinner"]))
            movie["properties"] = .object(movieProperties)
            movie["additionalProperties"] = false
            var moviePage = page
            var pageProperties = try #require(page["properties"]?.objectValue)
            pageProperties["items"] = ["type": "array", "items": .object(movie)]
            moviePage["properties"] = .object(pageProperties)

            for query in ["", "?$count=true&$top=5&$skip=3", "?$select=title,rating&$filter=year%20gt%201990"] {
                let reply = try await server.send(.get, "/tables/movies" + query, headers: v3)
                let problems = validator.problems(
                    of: try JSONDecoder().decode(JSONValue.self, from: reply.body), against: moviePage)
                #expect(problems.isEmpty, "GET /tables/movies\(query): \(problems)")
            }
            let single = try await server.send(.get, "/tables/movies/id-001", headers: v3)
            #expect(
                validator.problems(of: try JSONDecoder().decode(JSONValue.self, from: single.body), against: movie)
                    .isEmpty)
            let created = try await server.send(
                .post, "/tables/movies",
                json: ["title": "New", "rating": "PG13", "releaseDate": "2026-01-31", "year": 2026], headers: v3)
            #expect(created.status == 201)
            let createdProblems = validator.problems(
                of: try JSONDecoder().decode(JSONValue.self, from: created.body), against: movie)
            #expect(createdProblems.isEmpty, "\(createdProblems)")
            let broken: JSONValue = ["items": [["id": 3, "updatedAt": "yesterday", "rating": "X"]], "extra": true]
            #expect(validator.problems(of: broken, against: moviePage).count >= 4, "the validator can fail")
        }
    }
}

/// A JSON Schema checker for the keywords the OpenAPI documents use: `type` (one or a list),
/// `format` (date-time, date, time, byte), `enum`, `required`, `properties`,
/// `additionalProperties: false`, `items` and local `$ref`s.
struct ShapeValidator {
    let documents: [JSONValue]

    func resolve(_ reference: String, in document: JSONValue) -> [String: JSONValue]? {
        var node = document
        for part in reference.dropFirst(2).split(separator: "/") {
            guard let next = node.objectValue?[String(part)] else { return nil }
            node = next
        }
        return node.objectValue
    }

    func problems(of value: JSONValue, against schema: [String: JSONValue], at path: String = "$") -> [String] {
        if let reference = schema["$ref"]?.stringValue {
            guard let target = documents.lazy.compactMap({ resolve(reference, in: $0) }).first else {
                return ["\(path): unknown \(reference)"]
            }
            return problems(of: value, against: target, at: path)
        }
        var found: [String] = []
        let types: [String]? =
            switch schema["type"] {
            case .string(let type): [type]
            case .array(let list): list.compactMap(\.stringValue)
            default: nil
            }
        if let types, !types.contains(where: { Self.value(value, is: $0) }) {
            return ["\(path): \(value) is not \(types)"]
        }
        if case .array(let choices) = schema["enum"], !choices.contains(value) {
            found.append("\(path): \(value) is not one of \(choices)")
        }
        if case .string(let text) = value, let format = schema["format"]?.stringValue, !Self.text(text, has: format) {
            found.append("\(path): '\(text)' is not a \(format)")
        }
        if case .string(let text) = value, let pattern = schema["pattern"]?.stringValue,
            text.range(of: pattern, options: .regularExpression) == nil
        {
            found.append("\(path): '\(text)' does not match \(pattern)")
        }
        if case .object(let object) = value {
            let properties = schema["properties"]?.objectValue ?? [:]
            if case .array(let required) = schema["required"] {
                for name in required.compactMap(\.stringValue) where object[name] == nil {
                    found.append("\(path): '\(name)' is missing")
                }
            }
            for (name, member) in object {
                if let property = properties[name]?.objectValue {
                    found += problems(of: member, against: property, at: "\(path).\(name)")
                } else if schema["additionalProperties"] == false {
                    found.append("\(path): '\(name)' is not in the schema")
                }
            }
        }
        if case .array(let array) = value, let items = schema["items"]?.objectValue {
            for (index, element) in array.enumerated() {
                found += problems(of: element, against: items, at: "\(path)[\(index)]")
            }
        }
        return found
    }

    private static func value(_ value: JSONValue, is type: String) -> Bool {
        switch (type, value) {
        case ("null", .null), ("string", .string), ("boolean", .bool), ("number", .number), ("object", .object),
            ("array", .array):
            true
        case ("integer", .number(let number)): number.rounded() == number
        default: false
        }
    }

    private static func text(_ text: String, has format: String) -> Bool {
        let pattern: String
        switch format {
        case "date-time": pattern = #"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$"#
        case "date": pattern = #"^\d{4}-\d{2}-\d{2}$"#
        case "time": pattern = #"^\d{2}:\d{2}:\d{2}(\.\d+)?$"#
        case "byte": return Data(base64Encoded: text) != nil
        default: return true
        }
        return text.range(of: pattern, options: .regularExpression) != nil
    }
}
