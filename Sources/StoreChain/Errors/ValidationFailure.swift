/// Several problems found at once, so a person can fix them all in one pass.
public struct ValidationFailure: Error, Sendable, Hashable, CustomStringConvertible {
    /// Every problem found, in the order of the file.
    public var errors: [StoreChainError]

    /// A failure listing `errors`.
    public init(_ errors: [StoreChainError]) {
        self.errors = errors
    }

    /// One line per problem.
    public var description: String {
        errors.map(\.description).joined(separator: "\n")
    }
}
