import SyncProtocol

/// One device (`/service/devices/{id}`): its state, client, tables, recent errors, its lag over the
/// last 24 hours as a chart drawn here (SVG), and the support bundle an admin may ask it for.
struct ServiceDevicePage: Encodable, Sendable {
    var device: DeviceReport
    /// What its state means and what an admin can do about it.
    var advice: String
    var lastContact: String
    var lastContactISO: String
    var tables: [Table]
    var errors: [DeviceReport.ErrorReport]
    var hasErrors: Bool
    var chart: LagChart
    var reported: String?
    var client: String
    var oldNames: String?
    var bundleRequestHref: String
    var bundleHref: String?
    var bundleStatus: String
    /// Whose access is revoked and since when, whether the device was heard from since; nil when
    /// it has access.
    var revocation: String?
    /// Its wipe receipts, a sentence each.
    var receipts: [String] = []
    var escrowHref: String?

    /// Adds what the admin revoked of this device's access (its own, or its user's) and the receipts
    /// of its wipes.
    mutating func noteRevocation(
        _ revocation: Revocation?, lastContact: Int64, receipts: [WipeReceiptRecord], escrowHref: String
    ) {
        self.escrowHref = escrowHref
        if let revocation {
            let whom = revocation.kind == .user ? "Its user \(revocation.subject)'s access" : "Its access"
            let since = ServiceDevicesPage.readable(ProtocolDate.format(milliseconds: revocation.revokedAt))
            self.revocation =
                "\(whom) is revoked since \(since)" + (revocation.wipe ? ", with wipe" : ", read-only")
                + (lastContact >= revocation.revokedAt ? "." : "; not seen since.")
        }
        self.receipts = receipts.map {
            "Wiped at \(ServiceDevicesPage.readable($0.wipedAt)): \($0.rows) rows removed, \($0.escrowed) changes in escrow."
        }
    }

    static func advice(_ state: DeviceState) -> String {
        switch state {
        case .healthy: "It keeps up: its pulls reach the head, or advance within the behind time."
        case .oldShape:
            "It still writes former column names: its app predates a schema change. Update the app on the device."
        case .behind:
            "It syncs, but the oldest row it lacks has waited longer than the behind time: it pulls less often "
                + "than rows arrive, or was away. It catches up by itself when it pulls; watch that its position moves."
        case .stalled:
            "It keeps asking from the same position although rows wait past it: the app is not applying what it "
                + "receives. Ask for its support bundle below to see its queue and its log, or have the user reset "
                + "its sync (todosync client tokens reset)."
        case .offline: "It has not been heard from for the offline time: the device may be off, lost or uninstalled."
        }
    }

    struct Table: Encodable, Sendable {
        var name: String
        var state: String
        var position: String
        var positionSince: String
        var lastPull: String
        var lastPush: String
        var lag: String
        var lagRows: String
    }

    init(_ device: DeviceReport, lag: [DeviceRecord.LagSample], base: String, now: Int64) {
        self.device = device
        advice = Self.advice(device.state)
        lastContactISO = device.lastContact
        lastContact = ServiceDevicesPage.readable(device.lastContact)
        let readable = ServiceDevicesPage.readable
        tables = device.tables.map { table in
            Table(
                name: table.name, state: table.state.rawValue,
                position: table.position.map(readable) ?? "never pulled incrementally",
                positionSince: table.positionSince.map(readable) ?? "—", lastPull: table.lastPull.map(readable) ?? "—",
                lastPush: table.lastPush.map { "\(readable($0)) (\(table.lastPushStatus.map(String.init) ?? "?"))" }
                    ?? "—",
                lag: ServiceDevicesPage.duration(table.lagSeconds),
                lagRows: table.lagRows >= Fleet.lagCountLimit ? "\(Fleet.lagCountLimit)+" : "\(table.lagRows)")
        }
        errors = device.errors
        hasErrors = !errors.isEmpty
        chart = LagChart(samples: lag, now: now)
        reported = device.reported.map {
            "queue \($0.queue), oldest change \(ServiceDevicesPage.duration($0.oldest)) old, \($0.conflicts) conflicts (at \($0.at))"
        }
        client = [device.client.protocol, device.client.userAgent, device.user.map { "user \($0)" }].compactMap { $0 }
            .joined(separator: " · ")
        oldNames = device.oldNames.isEmpty ? nil : device.oldNames.joined(separator: ", ")
        let href = "\(base)/devices/\(NextPageLink.encode(device.id))"
        bundleRequestHref = href + "/bundle-request"
        bundleHref = device.bundle?.receivedAt != nil ? href + "/bundle" : nil
        switch (device.bundle?.requestedAt, device.bundle?.receivedAt) {
        case (nil, nil): bundleStatus = "Not asked for."
        case (let asked?, nil): bundleStatus = "Asked for at \(asked); it comes with the device's next request."
        case (_, let received?): bundleStatus = "Received at \(received)."
        }
    }
}
