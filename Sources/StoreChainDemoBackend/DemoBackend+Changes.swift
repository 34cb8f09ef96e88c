import Foundation
import HTTPTypes
import Hummingbird
import StoreChain

extension DemoBackend {
    /// `GET /v2/changes?since=CURSOR&wait=SECONDS&limit=N`: the changes after the cursor, oldest
    /// first, each with the object's current record (`null` once deleted), and the cursor to ask
    /// from next; held open up to `wait` seconds (at most 30) until there is one. Without
    /// `since`: no changes and the current cursor. A cursor older than the kept window, or from
    /// another run of the backend: 410 with the current cursor.
    ///
    /// ```json
    /// {"changes": [{"type": "album", "id": 7, "op": "update", "record": {"id": 7, …}}], "cursor": "k3x9-12"}
    /// ```
    func changes(_ request: Request, route: String) async throws -> Response {
        let quirks = self.quirks.withLock { $0 }
        if quirks.latency > .zero { try await Task.sleep(for: quirks.latency) }
        if let refusal = busyAnswer(route) { return refusal }
        let parameters = request.uri.queryParameters
        let wait = min(30, max(0, parameters.get("wait").flatMap(Double.init) ?? 0))
        let limit = min(1_000, max(1, parameters.get("limit").flatMap(Int.init) ?? 500))
        switch await changeLog.changes(after: parameters.get("since"), limit: limit, wait: .seconds(wait)) {
        case .gap(let cursor):
            let body = JSONValue.object([
                "error": .string(
                    "the changes after this cursor are no longer kept; refetch what you hold and go on from 'cursor'"),
                "cursor": .string(cursor),
            ])
            return raw(body.description, status: .gone)
        case .changes(let entries, let cursor):
            let body = JSONValue.object(["changes": .array(changesJSON(entries)), "cursor": .string(cursor)])
            return raw(body.description, status: .ok)
        }
    }

    /// Changes as the feeds send them: entity, key, operation and the object's current record
    /// (`null` once deleted), all read from one snapshot of the catalog.
    func changesJSON(_ entries: some Sequence<DemoChangeLog.Entry>) -> [JSONValue] {
        let snapshot = store.snapshot
        return entries.map { entry in
            let record = entry.operation == .delete ? nil : snapshot.node(for: entry.id).map(DemoRepresentation.v2)
            return JSONValue.object([
                "type": .string(entry.id.entity.lowercased()), "id": entry.id.key?.jsonValue ?? .null,
                "op": .string(entry.operation.rawValue), "record": record ?? .null,
            ])
        }
    }

    /// Changes random records `perSecond` times a second (an album's price, a track's title)
    /// until the task is cancelled, so the change feed has something to say.
    public func churn(perSecond: Double) async {
        guard perSecond > 0 else { return }
        var random = SystemRandomNumberGenerator()
        while !Task.isCancelled {
            do {
                try await Task.sleep(for: .seconds(1 / perSecond))
            } catch {
                return
            }
            let snapshot = store.snapshot
            let entity = Bool.random(using: &random) ? "Album" : "Track"
            guard let node = snapshot.nodes(of: entity).randomElement(using: &random) else { continue }
            let attributes: AttributeValues =
                entity == "Album"
                ? ["price": .double(Double(Int.random(in: 499...1_999, using: &random)) / 100)]
                : ["title": .string("Take \(Int.random(in: 1...999, using: &random))")]
            _ = try? save(SaveChanges(updated: [Node(id: node.id, attributes: attributes)]))
        }
    }
}
