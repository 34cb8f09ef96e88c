import Foundation
import StoreChain
import StoreChainFuzzing
import StoreChainPipeline

extension FuzzTarget {
    /// The model file loader: any text gives a model or a `ValidationFailure` whose every problem
    /// says where it is.
    public static let modelFile = FuzzTarget(name: "model-file") { bytes in
        do throws(ValidationFailure) {
            _ = try ModelFile.parse(String(decoding: bytes, as: UTF8.self), source: "fuzz.model.yml")
            return nil
        } catch {
            return FileFuzzing.unplaced(error, what: "model file")
        }
    }

    /// The pipeline file loader (validation only: it opens no files or connections): any text
    /// gives a pipeline or a `ValidationFailure` whose every problem says where it is.
    public static let pipeline = FuzzTarget(name: "pipeline") { bytes in
        guard let directory = FileFuzzing.directory else { return "the fuzz directory cannot be written" }
        do throws(ValidationFailure) {
            _ = try Pipeline.parse(
                String(decoding: bytes, as: UTF8.self), source: "fuzz.pipeline.yml", directory: directory,
                environment: ["MUSIC_TOKEN": "fuzz"], validatesOnly: true)
            return nil
        } catch {
            return FileFuzzing.unplaced(error, what: "pipeline file")
        }
    }
}

enum FileFuzzing {
    /// A folder holding the files a fuzzed pipeline may name (`music.model.yml`), made once and
    /// removed when the process exits.
    static let directory: URL? = {
        let folder = FileManager.default.temporaryDirectory
            .appendingPathComponent("storechain-fuzz-\(ProcessInfo.processInfo.processIdentifier)")
        do {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            atexit { if let folder = FileFuzzing.directory { try? FileManager.default.removeItem(at: folder) } }
            try musicModel.write(
                to: folder.appendingPathComponent("music.model.yml"), atomically: true, encoding: .utf8)
            return folder
        } catch {
            return nil
        }
    }()

    static let musicModel = """
        entities:
          Band:
            key: id
            attributes: { id: integer, name: string, founded: date? }
            relationships: { albums: { to-many: Album, inverse: band } }
          Album:
            key: id
            attributes: { id: integer, title: string, year: integer? }
            relationships: { band: { to-one: Band, inverse: albums } }
        """

    /// A failure with no problems, or a problem that names no place, breaks the loaders' promise.
    static func unplaced(_ failure: ValidationFailure, what: String) -> String? {
        guard !failure.errors.isEmpty else { return "a \(what) was refused without a reason" }
        for error in failure.errors where error.location?.file == nil && error.location?.line == nil {
            return "a \(what) problem says nothing of where it is: \(error)"
        }
        return nil
    }
}
