import Foundation
import TableService

// `service-bench DATABASE`: runs the table service on 127.0.0.1 (a free port, printed on the first
// line) over the given SQLite file, without request logs, until killed. Benchmarks/service-bench.sh
// drives it with wrk and curl.
guard CommandLine.arguments.count == 2 else {
    FileHandle.standardError.write(Data("usage: service-bench DATABASE\n".utf8))
    exit(2)
}
do {
    let running = try TableService.start(
        .init(databasePath: CommandLine.arguments[1], tables: ["bench"]), host: "127.0.0.1", port: 0, quiet: true)
    print(running.port)
    fflush(nil)
    while true { sleep(3600) }
} catch {
    FileHandle.standardError.write(Data("service-bench: \(error)\n".utf8))
    exit(1)
}
