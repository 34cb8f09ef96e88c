import Foundation
import StoreChain

/// How the demo backend writes objects: v1 in the model's own terms, v2 the way many real APIs
/// do (snake_case, a nested `attributes` object, epoch dates, numbers as strings, foreign keys
/// named `…_id`).
enum DemoRepresentation {
    static func v1(_ node: Node) -> JSONValue {
        var record: [String: JSONValue] = [:]
        for (name, value) in node.attributes { record[name] = value.jsonValue }
        for (name, value) in node.relationships {
            if case .toOne(let id) = value { record[name] = id?.key?.jsonValue ?? .null }
        }
        return .object(record)
    }

    static func v2(_ node: Node) -> JSONValue {
        guard case .object(var record) = v2Fields(node) else { return .null }
        // An object changed through the API has a version (each change makes the next); one
        // never changed has none, and updates of it are not conditional.
        if let version = node.version { record["version"] = .string(version) }
        return .object(record)
    }

    private static func v2Fields(_ node: Node) -> JSONValue {
        let a = node.attributes
        func key(_ relationship: String) -> JSONValue {
            if case .toOne(let id?)? = node.relationships[relationship] { return id.key?.jsonValue ?? .null }
            return .null
        }
        switch node.id.entity {
        case "Band":
            var attributes: [String: JSONValue] = ["name": a["name"]?.jsonValue ?? .null]
            if case .date(let founded)? = a["founded"] {
                attributes["founded_at"] = .integer(Int(founded.timeIntervalSince1970))
            }
            if let url = a["url"] { attributes["home_page"] = url.jsonValue }
            if let country = a["country"] { attributes["country_code"] = country.jsonValue }
            return .object(["id": a["id"]?.jsonValue ?? .null, "attributes": .object(attributes)])
        case "Album":
            var record: [String: JSONValue] = [
                "album_id": .string(a["id"]?.description ?? ""), "title": a["title"]?.jsonValue ?? .null,
                "release_year": a["year"]?.jsonValue ?? .null, "band_id": key("band"),
            ]
            if case .double(let price)? = a["price"] { record["price_usd"] = .string(String(format: "%.2f", price)) }
            return .object(record)
        default:
            return .object([
                "id": a["id"]?.jsonValue ?? .null, "name": a["title"]?.jsonValue ?? .null,
                "track_number": a["number"]?.jsonValue ?? .null, "length_seconds": a["seconds"]?.jsonValue ?? .null,
                "genre": a["genre"]?.jsonValue ?? .null, "album_id": key("album"),
            ])
        }
    }

    /// Reads a v2 request body back into attribute values and relationships for `entity`.
    static func fromV2(_ body: JSONValue, entity: String) throws(StoreChainError)
        -> (attributes: AttributeValues, relationships: [String: RelationshipValue])
    {
        var attributes: AttributeValues = [:]
        var relationships: [String: RelationshipValue] = [:]
        func take(_ path: String, _ name: String, _ type: AttributeType) throws(StoreChainError) {
            var current = body
            for component in path.split(separator: ".") {
                guard case .object(let members) = current, let next = members[String(component)] else { return }
                current = next
            }
            attributes[name] = try Value.coerce(current, to: type)
        }
        func link(_ field: String, _ name: String, _ destination: String) throws(StoreChainError) {
            guard case .object(let members) = body, let json = members[field] else { return }
            let key = try Value.coerce(json, to: .integer)
            relationships[name] = .toOne(key.isNull ? nil : ObjectID(entity: destination, key: key))
        }
        switch entity {
        case "Band":
            try take("id", "id", .integer)
            try take("attributes.name", "name", .string)
            try take("attributes.founded_at", "founded", .date)
            try take("attributes.home_page", "url", .url)
            try take("attributes.country_code", "country", .string)
        case "Album":
            try take("album_id", "id", .integer)
            try take("title", "title", .string)
            try take("release_year", "year", .integer)
            try take("price_usd", "price", .double)
            try link("band_id", "band", "Band")
        default:
            try take("id", "id", .integer)
            try take("name", "title", .string)
            try take("track_number", "number", .integer)
            try take("length_seconds", "seconds", .integer)
            try take("genre", "genre", .string)
            try link("album_id", "album", "Album")
        }
        return (attributes, relationships)
    }
}
