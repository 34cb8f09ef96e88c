import Foundation
import StoreChain
import StoreChainHTTP
import Yams

extension NodeDecoder {
    private enum InterceptorsKey: String, CodingKey {
        case interceptors
    }

    /// The HTTP interceptors a terminal's `interceptors:` option lists, built by their registered
    /// types: `- request-id` or `- token-file: { path: … }`. Every bad item is reported at once.
    func interceptors(in context: HandlerRegistry.Context) throws -> [any HTTPInterceptor] {
        let options = try container(keyedBy: InterceptorsKey.self)
        guard options.contains(.interceptors),
            let list = try options.superDecoder(forKey: .interceptors) as? NodeDecoder
        else { return [] }
        guard case .sequence(let items)? = list.node else {
            throw list.problem(
                "'interceptors' is a list of interceptors", "write one '- request-id' or '- token-file: { … }' per line"
            )
        }
        var interceptors: [any HTTPInterceptor] = []
        var problems: [StoreChainError] = []
        for (index, item) in items.enumerated() {
            let itemDecoder = list.child(item, key: IndexKey(index), path: "\(list.path)[\(index)]")
            var type: String?
            var optionsNode = Yams.Node.mapping(Yams.Node.Mapping([]))
            switch item {
            case .scalar(let scalar):
                type = scalar.string
            case .mapping(let mapping) where mapping.count == 1:
                if let (key, value) = mapping.first, case .scalar(let scalar) = key {
                    type = scalar.string
                    optionsNode = value
                }
            default:
                break
            }
            guard let type else {
                problems.append(
                    itemDecoder.problem("expected one interceptor", "write '- type' or '- type: { options }'"))
                continue
            }
            let types = context.interceptors.keys.sorted()
            guard let entry = context.interceptors[type] else {
                problems.append(
                    itemDecoder.problem(
                        "unknown interceptor type '\(type)'",
                        Suggestion.didYouMean(type, in: types) + " (registered: \(types.joined(separator: ", ")))"))
                continue
            }
            if case .scalar(let scalar) = optionsNode, scalar.string.isEmpty || scalar.string == "null" {
                optionsNode = .mapping(Yams.Node.Mapping([]))
            }
            do {
                let decoder = itemDecoder.child(optionsNode, key: IndexKey(index), path: "\(itemDecoder.path).\(type)")
                interceptors.append(try entry.make(decoder, context))
            } catch let failure as ValidationFailure {
                problems += failure.errors
            } catch let error as StoreChainError {
                problems.append(error.location?.line == nil ? error.located(itemDecoder.location) : error)
            }
        }
        if !problems.isEmpty { throw ValidationFailure(problems) }
        return interceptors
    }
}
