import HTTPServer
import SyncClient
import TableService

/// `GET /metrics`: the dashboard's figures in the Prometheus text format. The queue gauges are read
/// from the store at each scrape, so they cost nothing between scrapes; every synced table has its
/// gauges, 0 when nothing is queued (an alert on them never sees "no data").
struct MetricsController: Sendable {
    let context: SyncContext
    let metrics: DashboardMetrics

    func addRoutes(to router: inout Router) {
        router.get("/metrics") { _ in
            let (tables, counts) = try storeCall { () throws(SyncError) in
                (try context.syncedTables(), try context.operations.countsByTable())
            }
            metrics.updateQueue(counts, syncedTables: tables)
            return PrometheusExposition.response(metrics.exposition())
        }
    }
}
