import Foundation
import StoreChain
import Yams

/// Reads model files in YAML or JSON.
///
/// ```yaml
/// entities:
///   Band:
///     key: id
///     attributes: { id: integer, name: string, founded: date?, url: url? }
///     relationships: { albums: { to-many: Album, inverse: band } }
///   Album:
///     key: id
///     attributes:
///       id: integer
///       title: string
///       price: { type: double, optional: true, default: 9.99 }
///     relationships: { band: { to-one: Band, inverse: albums } }
/// ```
///
/// Every problem in the file is reported at once, each with file, line, column and key path.
public enum ModelFile {
    /// Loads a model file.
    ///
    /// - Throws: `ValidationFailure` listing every problem found.
    public static func load(contentsOf url: URL) throws(ValidationFailure) -> ObjectModel {
        let text: String
        do {
            text = try YAMLDocument.text(at: url, what: "the model file")
        } catch {
            throw ValidationFailure([error])
        }
        return try parse(text, source: url.relativePath)
    }

    /// Parses model file text; `source` names it in errors.
    public static func parse(_ text: String, source: String? = nil) throws(ValidationFailure) -> ObjectModel {
        let document: YAMLDocument
        do {
            document = try YAMLDocument(text: text, source: source)
        } catch {
            throw ValidationFailure([error])
        }
        var reader = ModelFileReader(document: document)
        let entities = reader.readEntities()
        if !reader.problems.isEmpty { throw ValidationFailure(reader.problems) }
        do {
            return try ObjectModel(entities)
        } catch {
            // The model's own rules report key paths; add the line each path is on.
            throw ValidationFailure(error.errors.map { reader.locate($0) })
        }
    }
}
