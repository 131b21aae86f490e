import HTTPServer
import SyncClient
import TableService

/// `GET /metrics`: the dashboard's figures in the Prometheus text format. The queue gauges are read
/// from the store at each scrape, so they cost nothing between scrapes.
struct MetricsController: Sendable {
    let context: SyncContext
    let metrics: DashboardMetrics

    func addRoutes(to router: inout Router) {
        router.get("/metrics") { _ in
            let counts = try storeCall { () throws(SyncError) in try context.operationCountsByTable() }
            metrics.updateQueue(counts)
            return PrometheusExposition.response(metrics.exposition())
        }
    }
}
