import ArgumentParser
import SyncClient

/// `--on-switch push|discard`: what becomes of queued changes when `--remote` names another service
/// than the one the store is bound to (`todosync client` and the dashboard).
struct RemoteSwitchOption: ParsableArguments {
    @Option(
        help: ArgumentHelp(
            "When --remote names another service than the store's and changes are queued: push them to the new service, or discard them.",
            valueName: "push|discard"))
    var onSwitch: RemoteSwitchChoice?

    /// Whether `error` is a switch refused for want of this option.
    static func isRefusal(_ error: SyncError) -> Bool {
        if case .remoteSwitchRefused = error { true } else { false }
    }

    /// The refusal's sentence and the option that makes the choice.
    static func explain(_ error: SyncError) -> String {
        error.description
            + " Pass --on-switch push to send them to the new service, or --on-switch discard to drop them."
    }
}

extension RemoteSwitchChoice: ExpressibleByArgument {}
