import Foundation
import StoreChain
import StoreChainDemoBackend
import Testing

/// Exactly once across crashes: `storechain save` (through an outbox, the demo backend up or
/// failing every request) and `storechain outbox replay` are killed with SIGKILL at random
/// moments. After every kill the outbox file passes `integrity_check`; once a last replay
/// finishes, the backend holds every save a child acknowledged exactly once, and nothing twice.
///
/// `swift test` runs a few kills; `Scripts/reliability.sh` runs many
/// (`STORECHAIN_CRASH_KILLS`, `STORECHAIN_CRASH_SEED` to replay a run).
@Suite(.serialized) struct OutboxCrashTests {
    static let environment = ProcessInfo.processInfo.environment
    static let kills = Int(environment["STORECHAIN_CRASH_KILLS"] ?? "") ?? 12

    @Test func savesAndReplaysKilledAtRandomMomentsReachTheBackendExactlyOnce() async throws {
        let seed = UInt64(Self.environment["STORECHAIN_CRASH_SEED"] ?? "") ?? UInt64.random(in: 1...UInt64.max)
        var random = SplitMix64(seed: seed)
        try await PipelineCommandTests.withDemo { v2, environment, backend in
            let pipeline = try OutboxCommandTests.offlinePipeline(beside: v2)
            let outboxPath = v2.deletingLastPathComponent().appending(path: "data/outbox.sqlite").path
            let storechain = try CommandRunner.executable()
            // One save run to the end sets the scale: kills land anywhere in a run, on any machine.
            let started = ContinuousClock.now
            let first = try await CommandRunner.run(
                ["save", "--pipeline", pipeline, "--entity", "Band", "--insert", #"{"name": "Crash first"}"#],
                environment: environment)
            try #require(first.status == 0, "\(first.stderr)")
            // The fastest whole run seen so far: under a loaded machine a first run can be slow.
            var runTime = max(2, Int((ContinuousClock.now - started) / .milliseconds(1)))
            var acknowledged = ["Crash first"]
            var attempted = ["Crash first"]
            var killed = 0
            for round in 1...Self.kills {
                let delay = Duration.milliseconds(Int.random(in: 1...(runTime * 3 / 2), using: &random))
                let arguments: [String]
                if Int.random(in: 0..<3, using: &random) == 0 {
                    backend.setQuirks(.none)
                    arguments = ["outbox", "replay", "--pipeline", pipeline]
                } else {
                    let down = Bool.random(using: &random)
                    backend.setQuirks(down ? DemoQuirks(failEvery: 1) : .none)
                    let name = "Crash \(seed % 10_000)-\(round)"
                    attempted.append(name)
                    arguments = [
                        "save", "--pipeline", pipeline, "--entity", "Band", "--insert", #"{"name": "\#(name)"}"#,
                    ]
                }
                let launched = ContinuousClock.now
                let outcome = try await KilledChild.run(
                    storechain, arguments: arguments, environment: environment, killAfter: delay, waitsForReady: false)
                if outcome.wasKilled {
                    killed += 1
                } else {
                    runTime = max(2, min(runTime, Int((ContinuousClock.now - launched) / .milliseconds(1))))
                }
                if arguments[0] == "save", outcome.lines.contains(where: { $0.contains(#""state": "#) }) {
                    acknowledged.append(attempted[attempted.count - 1])
                }
                if FileManager.default.fileExists(atPath: outboxPath) {
                    try CrashSafetyTests.checkIntegrity(outboxPath, seed: seed, round: round)
                }
            }
            backend.setQuirks(.none)
            let replay = try await CommandRunner.run(
                ["outbox", "replay", "--pipeline", pipeline], environment: environment)
            #expect(replay.status == 0, "seed \(seed): \(replay.stderr)")
            let names = backend.store.snapshot.nodes(of: "Band").compactMap { $0[attribute: "name"].stringValue }
            for name in attempted {
                let count = names.filter { $0 == name }.count
                #expect(count <= 1, "seed \(seed): \(name) was saved \(count) times")
                if acknowledged.contains(name) {
                    #expect(count == 1, "seed \(seed): \(name) was acknowledged but never reached the backend")
                }
            }
            #expect(killed > 0, "seed \(seed): every child finished before its kill")
        }
    }
}
