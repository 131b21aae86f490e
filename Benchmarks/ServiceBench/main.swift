import Foundation
import TableService

// `service-bench DATABASE`: runs the table service on 127.0.0.1 (a free port, printed on the first
// line) over the given SQLite file or PostgreSQL URL, without request logs, until killed.
// Benchmarks/service-bench.sh drives it with wrk and curl.
guard CommandLine.arguments.count == 2 else {
    FileHandle.standardError.write(Data("usage: service-bench DATABASE|postgres://...\n".utf8))
    exit(2)
}
do {
    let argument = CommandLine.arguments[1]
    let database: TableService.Database
    if PostgresLocation.isURL(argument) {
        var location = try PostgresLocation(url: argument, poolSize: 16)
        // SERVICE_BENCH_CHANNEL=off: the instance tells no other of its writes (the channel's cost).
        location.announcesChanges = ProcessInfo.processInfo.environment["SERVICE_BENCH_CHANNEL"] != "off"
        database = .postgres(location)
    } else {
        database = .sqlite(path: argument)
    }
    let running = try TableService.start(
        .init(database: database, tables: ["bench"]), host: "127.0.0.1", port: 0, quiet: true)
    try await running.service.ready()
    print(running.port)
    fflush(nil)
    while true { try await Task.sleep(for: .seconds(3600)) }
} catch {
    FileHandle.standardError.write(Data("service-bench: \(error)\n".utf8))
    exit(1)
}
