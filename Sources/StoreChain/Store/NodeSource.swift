/// Where the evaluator finds the objects a key path leads to (`band.name` needs the band).
public protocol NodeSource {
    func node(for id: ObjectID) -> Node?
}

/// A node source with no objects: key paths through relationships lead to `nil`.
public struct EmptyNodeSource: NodeSource {
    public init() {}
    public func node(for id: ObjectID) -> Node? { nil }
}

extension Dictionary: NodeSource where Key == ObjectID, Value == Node {
    public func node(for id: ObjectID) -> Node? { self[id] }
}
