import Background
import SyncClient
import Synchronization

/// The dashboard's doctor runs, each a job of the dashboard's background work: its results so far,
/// its report once done, and its job for Cancel. The newest ``kept`` runs are kept (in memory only: a doctor run writes
/// nothing to the store).
final class DoctorRuns: Sendable {
    /// One run.
    struct Run: Sendable {
        var number: Int
        var options: ProtocolDoctor.Options
        var results: [DoctorResult] = []
        var report: DoctorReport?
        var job: BackgroundJob?
    }

    /// Runs kept.
    static let kept = 10

    private let state = Mutex<(next: Int, runs: [Int: Run])>((1, [:]))
    private let work: BackgroundWork

    /// Runs with `work`, which the dashboard stops (a clean-up under way is waited for).
    init(work: BackgroundWork) {
        self.work = work
    }

    /// Starts a run; its number names its page.
    func start(_ options: ProtocolDoctor.Options) -> Int {
        let number = state.withLock { state -> Int in
            let number = state.next
            state.next += 1
            state.runs[number] = Run(number: number, options: options)
            for old in state.runs.keys.sorted().dropLast(Self.kept) { state.runs[old]?.job?.cancel() }
            state.runs = state.runs.filter { $0.key > number - Self.kept }
            return number
        }
        // A run outlives the request that started it (its page follows it); a newer run past the
        // kept ones cancels it.
        let job = work.run { [self] in
            let report = await ProtocolDoctor(options).run { result in
                state.withLock { $0.runs[number]?.results.append(result) }
            }
            state.withLock { $0.runs[number]?.report = report }
        }
        state.withLock { $0.runs[number]?.job = job }
        return number
    }

    /// The run numbered `number`, if kept.
    func run(_ number: Int) -> Run? { state.withLock { $0.runs[number] } }

    /// The run numbered `number` once it has ended (for tests and scripts).
    func finished(_ number: Int) async -> Run? {
        await state.withLock({ $0.runs[number]?.job })?.finished()
        return run(number)
    }

    /// The runs kept, newest first.
    var all: [Run] { state.withLock { $0.runs.values.sorted { $0.number > $1.number } } }

    /// Cancels a run (it ends within moments, deleting the rows it wrote).
    func cancel(_ number: Int) {
        state.withLock { $0.runs[number]?.job }?.cancel()
    }
}
