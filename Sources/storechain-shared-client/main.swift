// A client process for the scale-out tests (`StoreChainCLITests/SharedPostgresProcessTests`):
// several of these, each a chain of its own over one pipeline file, share a `postgres-cache` and
// a shared rate limit the way server instances would.
//
//     storechain-shared-client PIPELINE_PATH --fetches N [--names PREFIX] [--every MS] [--again-first]
//
// It loads the pipeline, prints `ready`, and waits for a line on standard input. Then it fetches
// bands whose name begins with "The" (the same request N times) or, with `--names`, with
// "PREFIX-i" for fetch i (N different requests): all at once, or one after another, one every MS
// milliseconds (a fetch that takes longer delays the next). `--again-first` then waits for another
// line on standard input and fetches the first request once more. It prints one JSON line
// per answer, `{"fetch":3,"status":"hit","objects":2}` or `{"fetch":3,"error":"…"}`, then `done`,
// and exits 1 if any fetch failed.
import Foundation
import StoreChain
import StoreChainPipeline

@main
struct SharedClient {
    struct Plan {
        var pipeline: URL
        var fetches = 1
        var namePrefix: String?
        var every: Duration = .zero
        var againFirst = false

        func request(_ index: Int) throws -> FetchRequest {
            let name = namePrefix.map { "\($0)-\(index)" } ?? "The"
            return FetchRequest(entity: "Band", predicate: try FetchPredicate("name BEGINSWITH[c] %@", name))
        }
    }

    static func main() async {
        do {
            let plan = try readPlan(Array(CommandLine.arguments.dropFirst()))
            let chain = try Pipeline.load(contentsOf: plan.pipeline).makeChain()
            announce("ready")
            _ = readLine()
            let failures = try await run(plan, on: chain)
            announce("done")
            exit(failures == 0 ? 0 : 1)
        } catch {
            FileHandle.standardError.write(Data("storechain-shared-client: \(error)\n".utf8))
            exit(2)
        }
    }

    /// Runs the plan's fetches and returns how many failed.
    static func run(_ plan: Plan, on chain: Chain) async throws -> Int {
        let requests = try (0..<plan.fetches).map(plan.request)
        var failures = 0
        if plan.every == .zero {
            failures = await withTaskGroup(of: Bool.self) { group in
                for (index, request) in requests.enumerated() {
                    group.addTask { await fetch(request, index: index, on: chain) }
                }
                return await group.reduce(0) { $0 + ($1 ? 0 : 1) }
            }
        } else {
            let start = ContinuousClock.now
            for (index, request) in requests.enumerated() {
                try? await Task.sleep(until: start + plan.every * index)
                failures += await fetch(request, index: index, on: chain) ? 0 : 1
            }
        }
        if plan.againFirst, let first = requests.first {
            _ = readLine()
            failures += await fetch(first, index: plan.fetches, on: chain) ? 0 : 1
        }
        return failures
    }

    /// Fetches and prints the outcome; whether it succeeded.
    static func fetch(_ request: FetchRequest, index: Int, on chain: Chain) async -> Bool {
        var line: [String: JSONValue] = ["fetch": .integer(index)]
        defer { announce(JSONValue.object(line).description) }
        do {
            let response = try await chain.send(.fetch(request))
            line["status"] = .string(response.info.cacheStatus?.rawValue ?? "none")
            if case .objects(let nodes) = try response.fetchResult() { line["objects"] = .integer(nodes.count) }
            return true
        } catch {
            line["error"] = .string("\(error)")
            return false
        }
    }

    static func readPlan(_ arguments: [String]) throws -> Plan {
        let usage =
            "usage: storechain-shared-client PIPELINE_PATH --fetches N [--names PREFIX] [--every MS] [--again-first]"
        guard let path = arguments.first else { throw StoreChainError(.invalidRequest, usage) }
        var plan = Plan(pipeline: URL(filePath: path))
        var rest = arguments.dropFirst().makeIterator()
        while let option = rest.next() {
            switch option {
            case "--fetches": plan.fetches = try number(rest.next(), for: option, usage: usage)
            case "--names": plan.namePrefix = rest.next()
            case "--every": plan.every = .milliseconds(try number(rest.next(), for: option, usage: usage))
            case "--again-first": plan.againFirst = true
            default: throw StoreChainError(.invalidRequest, "unknown option \(option); \(usage)")
            }
        }
        return plan
    }

    static func number(_ text: String?, for option: String, usage: String) throws -> Int {
        guard let text, let number = Int(text), number >= 0 else {
            throw StoreChainError(.invalidRequest, "\(option) takes a whole number; \(usage)")
        }
        return number
    }

    /// Writes a line straight to the pipe, in one write, so lines from concurrent fetches do not mix.
    static func announce(_ line: String) {
        FileHandle.standardOutput.write(Data((line + "\n").utf8))
    }
}
