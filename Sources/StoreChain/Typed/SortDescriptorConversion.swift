import Foundation

extension FetchSortDescriptor {
    /// Converts a Foundation sort descriptor over a generated type's fields:
    /// `SortDescriptor(\Album.Fields.year, order: .reverse)` sorts by `year`, largest first, and
    /// `SortDescriptor(\Album.Fields.band.name)` by the band's name (one to-one step).
    ///
    /// A string compared with a localized comparator (Apple platforms' default for a `String` key
    /// path is `.localizedStandard`) sorts case-insensitively, as `name[c]`; one made with
    /// `.lexical`, or from a plain `Comparable` key path (Linux), compares exactly.
    ///
    /// - Throws: `unsupported-predicate` when the key path is not an attribute of the entity or of
    ///   an entity one to-one relationship away.
    public init<Root: ModelFields>(_ sort: SortDescriptor<Root>) throws(StoreChainError) {
        guard let keyPath = sort.keyPath, let name = Root.modelName(for: keyPath) else {
            throw StoreChainError(
                .unsupportedPredicate,
                "SortDescriptor: \(sort.keyPath.map { "\($0)" } ?? "a comparator") is not an attribute of \(Root.self)",
                suggestion: "sort by an attribute, or by one of a to-one relationship's (\\.band.name)")
        }
        let ignoresCase = sort.stringComparator.map { $0 != .lexical } ?? false
        self.init(name, ascending: sort.order == .forward, caseInsensitive: ignoresCase)
    }
}
