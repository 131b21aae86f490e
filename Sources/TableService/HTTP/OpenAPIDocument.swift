import SyncProtocol

/// The service's tables described in OpenAPI 3.1 (served at `/openapi.json`), with the Datasync
/// v3 routes and shapes: one schema per table (declared columns with their types, dynamic columns
/// with the type their values gave them) and its `{items, count, nextLink}` page.
enum OpenAPIDocument {
    /// The document for `schemas`, with `declarations` giving declared columns their types.
    static func document(_ schemas: [TableSchema], declarations: ServiceSchema) -> JSONValue {
        var paths: [String: JSONValue] = [:]
        var components: [String: JSONValue] = [:]
        for schema in schemas {
            let name = schema.name
            components[name] = itemSchema(schema, declarations.declaration(of: name))
            components[name + "Page"] = pageSchema(name)
            paths["/tables/\(name)"] = withEpoch(
                collectionPath(name, QueryPatterns(schema, declarations.declaration(of: name))))
            paths["/tables/\(name)/{id}"] = withEpoch(itemPath(name))
            paths["/tables/\(name)/$changes"] = withEpoch(changesPath(name))
        }
        components["ChangeCursor"] = [
            "type": "object", "required": ["table", "cursor"],
            "properties": ["table": ["type": "string"], "cursor": ["type": "string"]],
        ]
        return [
            "openapi": "3.1.1",
            "info": [
                "title": "todosync table service",
                "version": "3.0.0",
                "description": .string(
                    "Tables spoken to with Datasync v3 (ZUMO-API-VERSION: 3.0.0) and Mobile Apps v2 (2.0.0)."),
            ],
            "paths": .object(paths),
            "components": ["schemas": .object(components), "headers": ["Epoch": epochHeader]],
        ]
    }

    /// `X-TodoSync-Epoch`, on every answer (see ``ServiceEpoch``).
    private static let epochHeader: JSONValue = [
        "description": .string(
            "Which life of the service's data answered: an id, and after a restore from a backup "
                + "'; restored-to=' and the ISO 8601 moment the data went back to. A client that saw another "
                + "epoch before reads its tables again and turns what the service lost into conflicts."),
        "schema": ["type": "string", "pattern": "^[A-Za-z0-9_-]{1,64}(; restored-to=[0-9TZ:.-]+)?$"],
    ]

    /// `path` with the epoch header described on each answer of each of its operations.
    private static func withEpoch(_ path: JSONValue) -> JSONValue {
        guard case .object(var operations) = path else { return path }
        for (method, operation) in operations {
            guard case .object(var members) = operation, case .object(var responses)? = members["responses"] else {
                continue
            }
            for (status, response) in responses {
                guard case .object(var described) = response else { continue }
                described["headers"] = ["X-TodoSync-Epoch": ["$ref": "#/components/headers/Epoch"]]
                responses[status] = .object(described)
            }
            members["responses"] = .object(responses)
            operations[method] = .object(members)
        }
        return .object(operations)
    }

    private static func itemSchema(_ schema: TableSchema, _ declaration: TableDeclaration?) -> JSONValue {
        var properties: [String: JSONValue] = [
            // Null or left out: the service gives the item a UUID.
            SystemColumn.id: [
                "type": ["null", "string"], "minLength": 1, "maxLength": 255, "pattern": .string(idPattern),
            ],
            SystemColumn.updatedAt: ["type": ["null", "string"], "format": "date-time", "readOnly": true],
            SystemColumn.version: ["type": "string", "format": "byte", "readOnly": true],
            SystemColumn.deleted: ["type": "boolean", "readOnly": true],
        ]
        for column in schema.userColumns {
            if let declared = declaration?.column(named: column.name) {
                properties[column.name] = self.declared(declared)
            } else {
                properties[column.name] = dynamic(column.type)
            }
        }
        // Names an older app may still send: accepted in writes, never answered.
        for column in declaration?.columns ?? [] {
            if let former = column.renamedFrom, properties[former] == nil {
                properties[former] = formerName(
                    column.type, "Renamed to '\(column.name)': a write under this name is stored there.")
            }
            if column.retired, properties[column.name] == nil {
                properties[column.name] = formerName(column.type, "Retired: writes to it are ignored.")
            }
        }
        // Other names are dynamic columns: a scalar value each, named as a column may be.
        return [
            "type": "object", "properties": .object(properties),
            "propertyNames": ["pattern": "^[A-Za-z_][A-Za-z0-9_]{0,127}$"],
            "additionalProperties": ["type": ["null", "string", "number", "boolean"]],
        ]
    }

    /// The ids the service takes in an address or a body: text without control characters (and,
    /// in this description, without the characters an address escapes), at most 255 characters
    /// (the service's limit is 255 bytes of UTF-8: an id of many non-ASCII characters is refused).
    static let idPattern = "^[^\\u0000-\\u001f\\u007f/?#%\\\\]+$"

    /// The times of day a declared column takes: `HH:mm`, `HH:mm:ss` or `HH:mm:ss.f…`, without an
    /// offset (answered as `HH:mm:ss.fff`).
    static let timeOfDayPattern = "^([01][0-9]|2[0-3]):[0-5][0-9](:[0-5][0-9](\\.[0-9]+)?)?$"

    /// A declared column, with its default.
    private static func declared(_ column: TableDeclaration.DeclaredColumn) -> JSONValue {
        var schema = declared(column.type)
        if let value = column.defaultValue, case .object(var members) = schema {
            members["default"] = value
            schema = .object(members)
        }
        return schema
    }

    /// A name writes may use but answers never have.
    private static func formerName(_ type: DeclaredType, _ description: String) -> JSONValue {
        guard case .object(var members) = declared(type) else { return declared(type) }
        members["deprecated"] = true
        members["writeOnly"] = true
        members["description"] = .string(description)
        return .object(members)
    }

    private static func declared(_ type: DeclaredType) -> JSONValue {
        switch type {
        case .string: ["type": ["null", "string"]]
        // Whole numbers past 2^53 do not survive a JSON number (a double): refused.
        case .integer:
            [
                "type": ["null", "integer"], "format": "int64", "minimum": -9_007_199_254_740_991,
                "maximum": 9_007_199_254_740_991,
            ]
        case .number: ["type": ["null", "number"], "format": "double"]
        case .boolean: ["type": ["null", "boolean"]]
        case .dateTime: ["type": ["null", "string"], "format": "date-time"]
        case .dateOnly: ["type": ["null", "string"], "format": "date"]
        // Not JSON Schema's "time", which needs an offset: a time of day has none.
        case .timeOfDay: ["type": ["null", "string"], "pattern": .string(timeOfDayPattern)]
        case .enumeration(let values):
            ["type": ["null", "string"], "enum": .array(values.map(JSONValue.string) + [.null])]
        }
    }

    private static func dynamic(_ type: ColumnType) -> JSONValue {
        switch type {
        case .string: ["type": ["null", "string"]]
        case .number: ["type": ["null", "number"]]
        case .boolean: ["type": ["null", "boolean"]]
        case .date: ["type": ["null", "string"], "format": "date-time"]
        case .unknown: ["type": ["null", "string", "number", "boolean"]]
        }
    }

    /// The change channel (see `ChangeChannel.swift`).
    private static func changesPath(_ table: String) -> JSONValue {
        let cursor: JSONValue = ["type": "string", "pattern": .string(ChangeCursor.pattern)]
        return [
            "get": [
                "operationId": .string("changes_" + table),
                "summary": "Waits for a change past the cursor (long poll), or streams them as Server-Sent Events.",
                "parameters": [
                    [
                        "name": "cursor", "in": "query", "required": false,
                        "description": .string(
                            "A cursor of an earlier answer or event. One past the table's newest change "
                                + "(from another table or database) is a 400: subscribe without one, then pull."),
                        "schema": cursor,
                    ],
                    [
                        "name": "timeout", "in": "query", "required": false,
                        "schema": ["type": "integer", "minimum": 0, "maximum": 120, "default": 30],
                    ],
                    ["name": "Last-Event-ID", "in": "header", "required": false, "schema": cursor],
                ],
                "responses": [
                    "200": [
                        "description": "The cursor now (without one), or past the one given.",
                        "content": [
                            "application/json": ["schema": ["$ref": "#/components/schemas/ChangeCursor"]],
                            "text/event-stream": ["schema": ["type": "string"]],
                        ],
                    ],
                    "204": ["description": "No change before the timeout."],
                    "400": [
                        "description":
                            "A cursor not of the documented form or past the table's newest change, or a timeout out of range."
                    ],
                    "503": ["description": "As many subscribers as the service takes; see Retry-After."],
                ],
            ]
        ]
    }

    private static func pageSchema(_ table: String) -> JSONValue {
        [
            "type": "object", "required": ["items"], "additionalProperties": false,
            "properties": [
                "items": ["type": "array", "items": reference(table), "readOnly": true],
                "count": ["type": ["null", "integer"], "format": "int32", "readOnly": true],
                "nextLink": ["type": ["null", "string"], "readOnly": true],
            ],
        ]
    }

    private static func reference(_ name: String) -> JSONValue {
        ["$ref": .string("#/components/schemas/\(name)")]
    }

    private static func json(_ schema: JSONValue) -> JSONValue {
        ["application/json": ["schema": schema]]
    }

    private static func parameter(_ name: String, _ description: String, _ schema: JSONValue) -> JSONValue {
        ["name": .string(name), "in": "query", "description": .string(description), "schema": schema]
    }

    private static func collectionPath(_ table: String, _ patterns: QueryPatterns) -> JSONValue {
        let parameters: [JSONValue] = [
            parameter("$count", "Whether to include the total count of items matching the query", ["type": "boolean"]),
            parameter(
                "$filter",
                "The OData filter to apply to the query. The pattern describes comparisons of a column with a "
                    + "value joined by 'and'; the service takes the rest of OData's filter language too.",
                ["type": "string", "pattern": .string(patterns.filter)]),
            parameter(
                "$orderby", "The comma-separated list of ordering instructions",
                ["type": "string", "pattern": .string(patterns.orderBy)]),
            parameter(
                "$select", "The comma-separated list of fields to return",
                ["type": "string", "pattern": .string(patterns.select)]),
            parameter(
                "$skip", "The number of items to skip", ["type": "integer", "minimum": 0, "maximum": 2_147_483_647]),
            parameter("$top", "The number of items to return", ["type": "integer", "minimum": 0, "maximum": 128_000]),
            parameter("__includedeleted", "Include soft-deleted items ('true' or 'false')", ["type": "boolean"]),
        ]
        return [
            "get": [
                "tags": [.string(table)], "parameters": .array(parameters),
                "responses": [
                    "200": ["description": "OK", "content": json(reference(table + "Page"))],
                    "400": [
                        "description": .string(
                            "Bad Request: a query option the service cannot read (a $filter it cannot parse, an "
                                + "unknown column); the error says which and where.")
                    ],
                ],
            ],
            "post": [
                "tags": [.string(table)],
                "requestBody": ["required": true, "content": json(reference(table))],
                "responses": [
                    "201": ["description": "Created", "content": json(reference(table))],
                    "400": ["description": "Bad Request"],
                    "409": ["description": "Conflict", "content": json(reference(table))],
                    "415": ["description": "Unsupported Media Type"],
                ],
            ],
        ]
    }

    private static func itemPath(_ table: String) -> JSONValue {
        let id: JSONValue = [
            "name": "id", "in": "path", "required": true,
            "schema": ["type": "string", "minLength": 1, "maxLength": 255, "pattern": .string(idPattern)],
        ]
        let entity: JSONValue = ["description": "OK", "content": json(reference(table))]
        let conflict: JSONValue = ["description": "Precondition Failed", "content": json(reference(table))]
        let gone: JSONValue = [
            "description": "Gone: the item was deleted (soft delete); add __includedeleted=true to read or replace it."
        ]
        return [
            "parameters": [id],
            "get": [
                "tags": [.string(table)],
                "responses": [
                    "200": entity, "304": ["description": "Not Modified"], "400": ["description": "Bad Request"],
                    "404": ["description": "Not Found"], "410": gone,
                ],
            ],
            "put": [
                "tags": [.string(table)],
                "requestBody": ["required": true, "content": json(reference(table))],
                "responses": [
                    "200": entity,
                    "400": [
                        "description": .string(
                            "Bad Request: a value that does not fit its column, or an id in the body other than "
                                + "the address's (an item's id cannot change; a body without an id replaces the "
                                + "address's item).")
                    ],
                    "404": ["description": "Not Found"], "410": gone, "412": conflict,
                ],
            ],
            "delete": [
                "tags": [.string(table)],
                "responses": [
                    "204": ["description": "No Content"], "400": ["description": "Bad Request"],
                    "404": ["description": "Not Found"], "410": gone, "412": conflict,
                ],
            ],
        ]
    }
}
