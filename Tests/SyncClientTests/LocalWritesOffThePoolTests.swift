import Dispatch
import Foundation
import GRDB
import TestSupport
import Testing

@testable import SyncClient

/// Local writes wait for the store's writer without holding a thread of the cooperative pool: a
/// write that waited on one (for a lock, or a disk slow to sync) would hold up every other task of
/// the process, the dashboard's pages included.
@Suite(.timeLimit(.minutes(10))) struct LocalWritesOffThePoolTests {
    @Test func editsWaitingForTheWriterLeaveThePoolToOtherTasks() async throws {
        let folder = try TemporaryFolder()
        let context = try SyncContext.temporary(in: folder)
        // The writer is busy (as with a transaction that waits for the disk) until released, or for
        // at most a minute: edits that held the pool's threads would let nothing release it.
        let release = DispatchSemaphore(value: 0)
        let heldTooLong = SharedInt()
        context.store.pool.asyncWriteWithoutTransaction { _ in
            if release.wait(timeout: .now() + .seconds(60)) == .timedOut { heldTooLong.add() }
        }
        // More edits than the pool has threads: each must start and wait without a thread.
        let editors = ProcessInfo.processInfo.activeProcessorCount * 2 + 2
        let started = SharedInt()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 0..<editors {
                group.addTask {
                    started.add()
                    try await context.table("todoitem").insert(["id": .string("edit-\(index)"), "text": "waits"])
                }
            }
            // An edit that held its thread would keep the others from starting: this would not end.
            while started.value < editors { await Task.yield() }
            release.signal()
            try await group.waitForAll()
        }
        #expect(heldTooLong.value == 0, "the edits held the pool's threads: they started only once the writer was free")
        #expect(try context.table("todoitem").count() == editors)
        try await context.close()
    }
}
