/// A device's lag over the last 24 hours, drawn on the server as an SVG polyline (the page needs no
/// script): time along, seconds of lag up, the highest labelled.
struct LagChart: Encodable, Sendable {
    static let width = 720
    static let height = 160
    static let padding = 8

    var width = Self.width
    var height = Self.height
    /// `x,y x,y …` of the polyline.
    var points: String
    /// Where the latest sample is drawn (a dot, so that a single sample shows).
    var lastX = 0
    var lastY = 0
    var hasSamples: Bool
    /// The highest lag shown, as people read it.
    var peak: String
    /// What a screen reader says of it.
    var summary: String

    init(samples: [DeviceRecord.LagSample], now: Int64) {
        let day = DeviceRecord.lagHistory
        let values = samples.filter { now - $0.at <= day }
        let top = max(values.map(\.seconds).max() ?? 0, 1)
        let plotWidth = Double(Self.width - 2 * Self.padding)
        let plotHeight = Double(Self.height - 2 * Self.padding)
        let xy = values.map { value in
            (
                x: Int(
                    (Double(Self.padding) + plotWidth * Double(max(0, value.at - (now - day))) / Double(day)).rounded()),
                y: Int((Double(Self.padding) + plotHeight * (1 - Double(value.seconds) / Double(top))).rounded())
            )
        }
        points = xy.map { "\($0.x),\($0.y)" }.joined(separator: " ")
        if let last = xy.last { (lastX, lastY) = (last.x, last.y) }
        hasSamples = !values.isEmpty
        peak = ServiceDevicesPage.duration(top)
        summary =
            values.isEmpty
            ? "No lag recorded in the last 24 hours."
            : "Lag over the last 24 hours: \(values.count) sample\(values.count == 1 ? "" : "s"), at most \(ServiceDevicesPage.duration(values.map(\.seconds).max() ?? 0)), now \(ServiceDevicesPage.duration(values.last?.seconds ?? 0))."
    }
}
