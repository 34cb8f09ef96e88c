import Foundation
import StoreChain

extension Inspector {
    /// The saves each outbox in the chain holds.
    struct OutboxView: Codable {
        struct Entry: Codable {
            var id: Int64
            /// `insert`, `update`, `delete`, or several joined by `+`.
            var kind: String
            /// One line per object the save changes, with its changed fields.
            var changes: [String]
            /// `pending` or `failed`.
            var state: String
            var attempts: Int
            var lastError: String?
            /// Seconds since 1970.
            var created: Double
        }

        var name: String
        var entries: [Entry]
        var error: String?
    }

    struct OutboxInput: Codable {
        /// The outbox's handler name; `nil`: the only one.
        var outbox: String?
        var id: Int64
    }

    struct OutboxAnswer: Codable {
        /// What the action did, for people.
        var done: String?
        /// Saves still pending in that outbox afterwards.
        var pending: Int?
        var error: String?
    }

    private var outboxes: [any SaveHolding] { chain.handlers(of: (any SaveHolding).self) }

    func outboxesView() async -> [OutboxView] {
        var views: [OutboxView] = []
        for outbox in outboxes {
            do {
                views.append(OutboxView(name: outbox.name, entries: try await outbox.entries().map(Self.view)))
            } catch {
                views.append(OutboxView(name: outbox.name, entries: [], error: "\(error)"))
            }
        }
        return views
    }

    private static func view(of entry: OutboxEntry) -> OutboxView.Entry {
        let changes = entry.changes
        let lines =
            changes.inserted.map { "insert \($0.id) " + fields($0) }
            + changes.updated.map { "update \($0.id) " + fields($0) }
            + changes.deleted.map { "delete \($0)" }
        return OutboxView.Entry(
            id: entry.id, kind: entry.kind, changes: lines, state: entry.state.rawValue, attempts: entry.attempts,
            lastError: entry.lastError, created: entry.created.timeIntervalSince1970)
    }

    /// A node's attributes and to-one relationships as `name: value`, sorted.
    private static func fields(_ node: Node) -> String {
        let attributes = node.attributes.map { "\($0.key): \($0.value)" }
        let relationships = node.relationships.compactMap { name, value in
            if case .toOne(let id) = value { "\(name): \(id.map(\.description) ?? "none")" } else { nil }
        }
        return (attributes + relationships).sorted().joined(separator: ", ")
    }

    /// Marks a save pending again and sends that outbox's pending saves now.
    func retryOutboxEntry(_ input: OutboxInput) async -> OutboxAnswer {
        await withOutbox(input.outbox) { outbox in
            try await outbox.retry(input.id)
            let pending = try await outbox.sync(context: chain.makeContext())
            let still = try await outbox.entries().first { $0.id == input.id }
            let done =
                switch still?.state {
                case nil: "save \(input.id) was sent"
                case .pending: "save \(input.id) is still pending: the backend could not be reached"
                case .failed: "save \(input.id) was refused again: \(still?.lastError ?? "no reason given")"
                }
            return OutboxAnswer(done: done, pending: pending)
        }
    }

    /// Forgets a save: it will never be sent.
    func discardOutboxEntry(_ input: OutboxInput) async -> OutboxAnswer {
        await withOutbox(input.outbox) { outbox in
            try await outbox.discard(input.id)
            return OutboxAnswer(done: "save \(input.id) was discarded")
        }
    }

    private func withOutbox(
        _ name: String?, _ action: (any SaveHolding) async throws -> OutboxAnswer
    ) async -> OutboxAnswer {
        let chosen = outboxes.filter { name == nil || $0.name == name }
        guard chosen.count == 1, let outbox = chosen.first else {
            let names = outboxes.map(\.name)
            return OutboxAnswer(
                error: names.isEmpty
                    ? "this chain has no outbox"
                    : "name one of the chain's outboxes in 'outbox': " + names.joined(separator: ", "))
        }
        do {
            return try await action(outbox)
        } catch {
            return OutboxAnswer(error: "\(error)")
        }
    }
}
