// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "todosync",
    products: [
        .executable(name: "todosync", targets: ["todosync"]),
        .library(name: "SyncClient", targets: ["SyncClient"]),
        .library(name: "TableService", targets: ["TableService"]),
    ],
    dependencies: [
        .package(url: "https://github.com/groue/GRDB.swift", exact: "7.10.0"),
        .package(url: "https://github.com/hummingbird-project/swift-mustache", exact: "2.1.1"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
        // The client's TLS settings (--ca-file); async-http-client speaks TLS through it already.
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.37.6"),
        // Tests make a CA and a server certificate at run time (jwt-kit depends on both already).
        .package(url: "https://github.com/apple/swift-certificates", from: "1.21.1"),
        .package(url: "https://github.com/apple/swift-asn1", from: "1.7.4"),
        .package(url: "https://github.com/apple/swift-crypto", "3.12.3"..<"5.0.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/vapor/jwt-kit", exact: "5.8.0"),
        .package(url: "https://github.com/vapor/postgres-nio", exact: "1.33.2"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.8.0"),
        .package(url: "https://github.com/apple/swift-metrics", exact: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", exact: "2.4.1"),
        .package(url: "https://github.com/weichsel/ZIPFoundation", exact: "0.9.20"),
        // Tests move the table service's timers (`TestClock`) instead of waiting for them.
        .package(url: "https://github.com/pointfreeco/swift-clocks", exact: "1.1.1"),
    ],
    targets: [
        // The C boundary: libmicrohttpd's headers and a few-line shim for its variadic calls.
        .systemLibrary(
            name: "CMicroHTTPD",
            pkgConfig: "libmicrohttpd",
            providers: [.apt(["libmicrohttpd-dev"])]
        ),
        .target(name: "CMicroHTTPDShim", dependencies: ["CMicroHTTPD"]),

        // Layers, lowest first. Arrows point one way: Dashboard → SyncClient → SyncProtocol,
        // TableService → SyncProtocol, both → HTTPServer, Storage, Views; Dashboard → TableService
        // (the embedded service of its composition root, `Dashboard.launch`).
        // The background work of the long-lived parts (the table service, the dashboard) as one task group each.
        .target(name: "Background"),
        .target(
            name: "HTTPServer",
            dependencies: [
                "CMicroHTTPD", "CMicroHTTPDShim", .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // GRDBSQLite: the SQLite C API, for reading the database file through SQLite's own handle.
        .target(
            name: "Storage",
            dependencies: [
                .product(name: "GRDB", package: "GRDB.swift"), .product(name: "GRDBSQLite", package: "GRDB.swift"),
            ]),
        .target(
            name: "Views",
            dependencies: [
                "HTTPServer", .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Mustache", package: "swift-mustache"),
            ]
        ),
        .target(name: "SyncProtocol", dependencies: [.product(name: "HTTPTypes", package: "swift-http-types")]),
        .target(
            name: "TableService",
            dependencies: [
                "Background", "HTTPServer", "Storage", "SyncProtocol", "Views",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                // The fleet's alert webhook.
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                // PostgreSQL over TLS (`sslmode` in the database URL).
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ],
            exclude: ["IncrementalPull.md"]
        ),
        .target(
            name: "SyncClient",
            dependencies: [
                "Storage", "SyncProtocol", .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Logging", package: "swift-log"), .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"), .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ]
        ),
        .target(
            name: "Dashboard",
            dependencies: [
                "Background", "HTTPServer", "Storage", "SyncClient", "SyncProtocol", "TableService", "Views",
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "ZIPFoundation", package: "ZIPFoundation"),
            ]
        ),
        // A fault-injecting HTTP proxy for reliability tests and `todosync proxy` (on swift-nio).
        .target(
            name: "FaultProxy",
            dependencies: [
                .product(name: "NIOCore", package: "swift-nio"), .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ]),
        .executableTarget(
            name: "todosync",
            dependencies: [
                "Dashboard", "TableService", "SyncClient", "SyncProtocol", "HTTPServer", "Views", "FaultProxy",
                "Storage",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
            ]
        ),

        .executableTarget(
            name: "http-bench", dependencies: ["HTTPServer", "Views"], path: "Benchmarks/HTTPBench",
            exclude: ["templates"]),
        .executableTarget(name: "service-bench", dependencies: ["TableService"], path: "Benchmarks/ServiceBench"),
        .executableTarget(
            name: "backup-bench",
            dependencies: [
                "TableService", "Storage", .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
            ],
            path: "Benchmarks/BackupBench"),
        .executableTarget(
            name: "client-bench",
            dependencies: [
                "SyncClient", "TableService", "Storage", "SyncProtocol", "HTTPServer", "TestSupport",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
            ],
            path: "Benchmarks/ClientBench"),
        .executableTarget(
            name: "conflict-bench",
            dependencies: [
                "SyncClient", "TableService", "Dashboard", "Views", "SyncProtocol",
                .product(name: "GRDB", package: "GRDB.swift"),
            ],
            path: "Benchmarks/ConflictBench"),
        .executableTarget(
            name: "live-bench",
            dependencies: [
                "Dashboard", "SyncClient", "SyncProtocol", "TableService", "Views",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
            ],
            path: "Benchmarks/LiveBench"),
        .executableTarget(
            name: "schema-bench",
            dependencies: [
                "SyncClient", "SyncProtocol", "TableService", .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
            ],
            path: "Benchmarks/SchemaBench"),
        .executableTarget(
            name: "dashboard-bench",
            dependencies: [
                "Dashboard", "SyncClient", "SyncProtocol", "TableService", "Views",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
            ],
            path: "Benchmarks/DashboardBench"),

        .target(
            name: "TestSupport",
            dependencies: [
                "Background", "Dashboard", "FaultProxy", "HTTPServer", "SyncClient", "SyncProtocol", "TableService",
                "Views",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "PostgresNIO", package: "postgres-nio"), .product(name: "Logging", package: "swift-log"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"), .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            path: "Tests/TestSupport"),
        .testTarget(name: "BackgroundTests", dependencies: ["Background"]),
        .testTarget(
            name: "HTTPServerTests",
            dependencies: ["HTTPServer", "TestSupport", .product(name: "HTTPTypes", package: "swift-http-types")]),
        .testTarget(
            name: "StorageTests",
            dependencies: ["Storage", "TestSupport", .product(name: "GRDB", package: "GRDB.swift")]),
        .testTarget(name: "ViewsTests", dependencies: ["Views", "HTTPServer", "TestSupport"]),
        .testTarget(name: "SyncProtocolTests", dependencies: ["SyncProtocol"]),
        .testTarget(
            name: "TableServiceTests",
            dependencies: [
                "FaultProxy", "TableService", "HTTPServer", "SyncProtocol", "Storage", "TestSupport",
                .product(name: "HTTPTypes", package: "swift-http-types"), .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "GRDB", package: "GRDB.swift"), .product(name: "Clocks", package: "swift-clocks"),
            ],
            // The Datasync v3 conformance data (with its licence and source in Fixtures/DatasyncV3/README.md).
            resources: [.copy("Fixtures")]),
        .testTarget(
            name: "SyncClientTests",
            dependencies: [
                "FaultProxy", "SyncClient", "TableService", "HTTPServer", "SyncProtocol", "TestSupport",
                .product(name: "GRDB", package: "GRDB.swift"), .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
            ],
            exclude: ["Fixtures"]
        ),
        .testTarget(
            name: "ReliabilityTests",
            dependencies: [
                "FaultProxy", "SyncClient", "TableService", "Dashboard", "HTTPServer", "SyncProtocol", "Storage",
                "TestSupport", "Views", .product(name: "HTTPTypes", package: "swift-http-types"),
            ]),
        .testTarget(
            name: "DashboardTests",
            dependencies: [
                "Dashboard", "FaultProxy", "TableService", "SyncClient", "HTTPServer", "SyncProtocol", "Views",
                "TestSupport",
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ]),
    ],
    swiftLanguageModes: [.v6]
)
