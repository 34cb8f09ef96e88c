/// Several problems found at once, so a person can fix them all in one pass.
public struct ValidationFailure: Error, Sendable, Hashable, CustomStringConvertible {
    public var errors: [StoreChainError]

    public init(_ errors: [StoreChainError]) {
        self.errors = errors
    }

    /// One line per problem.
    public var description: String {
        errors.map(\.description).joined(separator: "\n")
    }
}
