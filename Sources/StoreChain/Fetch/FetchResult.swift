/// What a fetch returns, in the form its request's result type asked for.
public enum FetchResult: Sendable, Hashable {
    /// The matching objects.
    case objects([Node])
    /// The matching objects' IDs.
    case objectIDs([ObjectID])
    /// How many objects match.
    case count(Int)
    /// One dictionary per object, keyed by the requested property names.
    case dictionaries([[String: Value]])
}
