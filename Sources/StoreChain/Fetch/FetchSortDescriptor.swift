import Foundation

/// Orders fetched objects by a key path. `nil` sorts first when ascending.
public struct FetchSortDescriptor: Sendable, Hashable, CustomStringConvertible {
    /// A key path through to-one relationships to an attribute (`name`, `band.name`).
    public var keyPath: String
    /// Whether the order is ascending.
    public var ascending: Bool
    /// Compare strings ignoring case.
    public var caseInsensitive: Bool

    /// Sorts by `keyPath` (an attribute, or one reached through to-one relationships).
    public init(_ keyPath: String, ascending: Bool = true, caseInsensitive: Bool = false) {
        self.keyPath = keyPath
        self.ascending = ascending
        self.caseInsensitive = caseInsensitive
    }

    /// Parses the command-line form: `name`, `-year` (descending), `name[c]` (case-insensitive).
    public init(parsing text: String) throws(StoreChainError) {
        var text = text.trimmingCharacters(in: .whitespaces)
        let descending = text.hasPrefix("-")
        if descending || text.hasPrefix("+") { text.removeFirst() }
        let caseInsensitive = text.hasSuffix("[c]")
        if caseInsensitive { text.removeLast(3) }
        let components = text.split(separator: ".", omittingEmptySubsequences: false)
        guard !text.isEmpty, components.allSatisfy({ ModelValidator.isIdentifier(String($0)) }) else {
            throw StoreChainError(
                .invalidRequest, "sort key '\(text)' is not a key path",
                suggestion: "write KEY, -KEY for descending, or KEY[c] to ignore case, as in -year,name[c]")
        }
        self.init(text, ascending: !descending, caseInsensitive: caseInsensitive)
    }

    /// The command-line form: `-name[c]`.
    public var description: String {
        (ascending ? "" : "-") + keyPath + (caseInsensitive ? "[c]" : "")
    }
}
