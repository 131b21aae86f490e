import Synchronization
import Testing

@testable import TableService

/// Horizon readings shared by the requests that ask at once: each caller gets a reading begun
/// after it asked (a reading already under way may predate a write the caller saw acknowledged),
/// and the callers that arrive during one reading share the next.
@Suite struct HorizonReaderTests {
    /// Readings that wait until the test lets each of them finish, counting how many began.
    final class GatedReads: Sendable {
        private let state = Mutex<(began: Int, gates: [CheckedContinuation<Void, Never>])>((0, []))

        var began: Int { state.withLock { $0.began } }

        func read() async -> PostgresHorizon.Reading {
            await withCheckedContinuation { continuation in
                state.withLock { state in
                    state.began += 1
                    state.gates.append(continuation)
                }
            }
            let began = state.withLock { $0.began }
            return PostgresHorizon.Reading(horizon: Int64(began), clockMicros: Int64(began) * 1000)
        }

        /// Lets the oldest waiting reading finish, once one is waiting.
        func releaseOne() async {
            while true {
                let gate = state.withLock { state in state.gates.isEmpty ? nil : state.gates.removeFirst() }
                if let gate { return gate.resume() }
                await Task.yield()
            }
        }
    }

    @Test(.timeLimit(.minutes(10)))
    func callersArrivingDuringAReadingGetALaterOneAndShareIt() async throws {
        let reader = HorizonReader()
        let reads = GatedReads()
        let first = Task { try await reader.reading { await reads.read() } }
        while reads.began < 1 { await Task.yield() }
        // Eight callers arrive while the first reading is under way.
        let later = (0..<8).map { _ in Task { try await reader.reading { await reads.read() } } }
        while reader.callersWaitingForNext < 8 { await Task.yield() }
        await reads.releaseOne()
        #expect(try await first.value.horizon == 1)
        await reads.releaseOne()
        for caller in later {
            // The next reading, begun after they asked, for all eight.
            #expect(try await caller.value.horizon == 2)
        }
        #expect(reads.began == 2)
    }

    @Test(.timeLimit(.minutes(10)))
    func aCallerAfterAReadingEndedGetsAFreshOne() async throws {
        let reader = HorizonReader()
        let reads = GatedReads()
        let first = Task { try await reader.reading { await reads.read() } }
        await reads.releaseOne()
        _ = try await first.value
        let second = Task { try await reader.reading { await reads.read() } }
        await reads.releaseOne()
        #expect(try await second.value.horizon == 2)
        #expect(reads.began == 2)
    }
}
