import Foundation
import StoreChain
import StoreChainTesting
import Testing

/// `RequestContext.subrequest`: what a responder needs from upstream goes through the whole
/// chain from its first handler, keeps the deadline and cache policy, carries its lineage,
/// and never loops.
@Suite struct SubrequestTests {
    /// Answers a fault of Band/1 by asking the chain for Band/2 and for Band/1 again; records
    /// what each sub-request saw.
    final class AskingTerminal: StoreResponder {
        let seen = Locked<[String]>([])

        func respond(to request: StoreRequest, context: RequestContext) async throws -> StoreResponse {
            seen.withLock {
                $0.append(
                    "\(request) lineage=\(context.lineage.count) policy=\(String(describing: context.cachePolicy))")
            }
            let answer = StoreResponse(.object(nil), info: ResponseInfo(answeredBy: "asking", origin: .remote))
            guard case .objectFault(let id) = request, id.key == .integer(1) else { return answer }
            let other = try await context.subrequest(.objectFault(ObjectID(entity: "Band", key: 2)), serving: request)
            let itself = try await context.subrequest(request, serving: request)
            seen.withLock { $0.append("other=\(other != nil) itself=\(itself != nil)") }
            return answer
        }
    }

    @Test func subrequestsStartAtTheTopKeepThePolicyAndNeverLoop() async throws {
        let terminal = AskingTerminal()
        let log = SharedLog()
        let chain = Chain(terminal: terminal) { RecordingHandler("top", log: log) }
        let context = chain.makeContext(cachePolicy: .reload)
        _ = try await chain.send(.objectFault(ObjectID(entity: "Band", key: 1)), context: context)
        #expect(log.all.filter { $0.hasPrefix("top ↓") }.count == 2, "the fault and its sub-request: \(log.all)")
        #expect(
            terminal.seen.withLock { $0 } == [
                "object-fault Band/1 lineage=0 policy=Optional(StoreChain.CachePolicy.reload)",
                "object-fault Band/2 lineage=1 policy=Optional(StoreChain.CachePolicy.reload)",
                "other=true itself=false",
            ])
    }

    @Test func aResponderOutsideAChainDoesTheWorkItself() async throws {
        let terminal = AskingTerminal()
        _ = try await terminal.respond(to: .objectFault(ObjectID(entity: "Band", key: 1)), context: RequestContext())
        #expect(terminal.seen.withLock { $0.last } == "other=false itself=false")
    }

    /// A request a handler sends on its own account needs the chain; with none, it fails saying
    /// so instead of answering nothing.
    @Test func aRequestOnAHandlersOwnAccountOutsideAChainFailsSayingSo() async throws {
        let error = await #expect(throws: StoreChainError.self) {
            try await RequestContext().sendOnOwnAccount(.objectFault(ObjectID(entity: "Band", key: 1)))
        }
        #expect(error?.code == .unavailable)
        #expect(error?.message.contains("there is none") == true)
    }

    /// Asks for the next band's fault while answering each one: an endless chain of new
    /// requests, which the lineage bound ends.
    final class EndlessTerminal: StoreResponder {
        let count = Locked(0)

        func respond(to request: StoreRequest, context: RequestContext) async throws -> StoreResponse {
            count.withLock { $0 += 1 }
            if case .objectFault(let id) = request, case .integer(let key)? = id.key {
                _ = try await context.subrequest(
                    .objectFault(ObjectID(entity: "Band", key: .integer(key + 1))), serving: request)
            }
            return StoreResponse(.object(nil), info: ResponseInfo(answeredBy: "endless", origin: .remote))
        }
    }

    @Test func nestingIsBounded() async throws {
        let terminal = EndlessTerminal()
        _ = try await Chain(handlers: [], terminal: terminal).send(.objectFault(ObjectID(entity: "Band", key: 1)))
        #expect(terminal.count.withLock { $0 } == 9, "the request and eight levels of sub-requests")
    }
}
