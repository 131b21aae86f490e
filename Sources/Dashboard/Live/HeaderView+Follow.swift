extension HeaderView {
    /// How the dashboard follows its remote, as the header says it: "Live" (the remote tells of
    /// changes as they happen), "Polling every 30 s" (auto-sync asks), "Offline", or nil when
    /// auto-sync is off (and in an opened support bundle).
    static func followLabel(_ autoSync: AutoSyncStatus?) -> String? {
        guard let autoSync else { return nil }
        switch autoSync.follow {
        case .live: return "Live"
        case .polling:
            let seconds = autoSync.interval ?? 0
            let every = seconds == seconds.rounded() ? String(Int(seconds)) : String(seconds)
            return "Polling every \(every) s"
        case .offline: return "Offline"
        case .off: return nil
        }
    }
}
