/// Where the evaluator finds the objects a key path leads to (`band.name` needs the band).
public protocol NodeSource {
    /// The node of object `id`, if known.
    func node(for id: ObjectID) -> Node?
}

/// A node source with no objects: key paths through relationships lead to `nil`.
public struct EmptyNodeSource: NodeSource {
    /// A source that knows no node.
    public init() {}
    /// Always `nil`.
    public func node(for id: ObjectID) -> Node? { nil }
}

extension Dictionary: NodeSource where Key == ObjectID, Value == Node {
    /// The node stored under `id`.
    public func node(for id: ObjectID) -> Node? { self[id] }
}

/// Nodes found first in a dictionary, then in a source beneath it: a source with a few more
/// nodes, without copying the one beneath.
struct NodeOverlay<Base: NodeSource>: NodeSource {
    let top: [ObjectID: Node]
    let base: Base

    init(_ top: [ObjectID: Node], over base: Base) {
        self.top = top
        self.base = base
    }

    func node(for id: ObjectID) -> Node? {
        top[id] ?? base.node(for: id)
    }
}

extension NodeSource {
    /// The objects reached from `nodes` along relationship key paths (`albums`,
    /// `albums.tracks`), each once and none of `nodes` themselves: what prefetching returns.
    package func nodes(along keyPaths: [String], from nodes: [Node]) -> [Node] {
        var seen = Set(nodes.map(\.id))
        var reached: [Node] = []
        for keyPath in keyPaths {
            var current = nodes
            for name in keyPath.split(separator: ".").map(String.init) {
                var next: [Node] = []
                for node in current {
                    for id in node.relationships[name]?.objectIDs ?? [] {
                        guard let found = self.node(for: id) else { continue }
                        next.append(found)
                        if seen.insert(id).inserted { reached.append(found) }
                    }
                }
                current = next
            }
        }
        return reached
    }
}
