/// What a fetch returns, in the form its request's result type asked for.
public enum FetchResult: Sendable, Hashable {
    case objects([Node])
    case objectIDs([ObjectID])
    case count(Int)
    /// One dictionary per object, keyed by the requested property names.
    case dictionaries([[String: Value]])
}
