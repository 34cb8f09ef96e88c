import Foundation
import GRDB
import StoreChain

/// The query that reads an entity's nodes in the order they were first stored, filtered by what
/// `SQLPredicate` compiles of a predicate.
struct NodeSelection {
    let sql: String
    let arguments: StatementArguments
    /// The to-one relationships the filter compares by target, whose indexes serve it.
    let targets: Set<String>
    /// Whether it is a relationship fault's filter (`album.id == 5`), whose prepared statement is
    /// worth keeping; others, of many shapes and list lengths, are prepared each time.
    let isOwnerFilter: Bool

    private static let columns = """
        SELECT rowid AS row_id, payload, compressed, raw_size, fetched_at, expires_at, etag, last_modified, page_validators, rules
        FROM nodes WHERE
        """

    /// Every node of `entity`, unfiltered.
    static func all(of entity: String) -> (sql: String, arguments: StatementArguments) {
        (columns + " entity = ?", [entity])
    }

    init(of entity: String, matching predicate: FetchPredicate?, model: ObjectModel?) {
        let all = Self.all(of: entity)
        guard let predicate, let description = model?.entity(named: entity),
            let compiled = SQLPredicate(predicate, entity: description, model: model)
        else {
            (sql, arguments, targets, isOwnerFilter) = (all.sql + " ORDER BY row_id", all.arguments, [], false)
            return
        }
        // Without statistics SQLite takes the entity's index over a target index for a list of
        // two keys or more (`album.id IN {…}`), and reads every row of the entity: the hint says
        // the entity alone selects most rows, so the target index is used.
        var sql =
            (compiled.selectsByTarget ? Self.columns + " likelihood(entity = ?, 0.9)" : all.sql)
            + " AND (\(compiled.sql))"
        var arguments = all.arguments + compiled.arguments
        // With the rows whose payload the target function could not read for a relationship it
        // compares (it gave `AttributeFunction.damagedTargetSQL`; an index lookup where one was
        // made): the filter would leave them out silently, and decoding them drops them and
        // fails the read, as when a filter meets a damaged payload.
        for relationship in compiled.targets.sorted() {
            sql +=
                " UNION ALL \(all.sql) AND \(AttributeFunction.targetExpression(relationship)) = "
                + AttributeFunction.damagedTargetSQL
            arguments += all.arguments
        }
        self.sql = sql + " ORDER BY row_id"
        self.arguments = arguments
        targets = compiled.targets
        if compiled.targets.count == 1, case .comparison(let comparison) = predicate {
            isOwnerFilter = comparison.op == .equal
        } else {
            isOwnerFilter = false
        }
    }
}
