import Foundation
import PackagePlugin

/// `swift package storechain-validate [--env NAME=VALUE …] [--ignore-type TYPE …]`: checks every
/// pipeline and model file in the package (`*.pipeline.yml`, `*.pipeline.json`, `*.model.yml`,
/// `*.model.json`, outside `.build`) with `storechain validate`, and fails when any has a problem.
/// The arguments are passed on to `storechain validate`.
@main
struct StoreChainValidatePlugin: CommandPlugin {
    func performCommand(context: PluginContext, arguments: [String]) async throws {
        let tool = try context.tool(named: "storechain")
        let root = context.package.directoryURL
        var files: [String] = []
        let enumerator = FileManager.default.enumerator(at: root, includingPropertiesForKeys: nil)
        while let url = enumerator?.nextObject() as? URL {
            let path = url.path
            if path.contains("/.build") || path.contains("/cache/") || path.contains("/Fixtures/errors/") { continue }
            let name = url.lastPathComponent
            if [".pipeline.yml", ".pipeline.json", ".model.yml", ".model.json"].contains(where: name.hasSuffix) {
                files.append(path)
            }
        }
        let process = Process()
        process.executableURL = tool.url
        process.arguments = ["validate"] + arguments + files.sorted()
        try process.run()
        process.waitUntilExit()
        if process.terminationStatus != 0 {
            Diagnostics.error("storechain validate found problems (see above)")
            throw ExitCode(process.terminationStatus)
        }
    }
}

struct ExitCode: Error {
    let code: Int32
    init(_ code: Int32) { self.code = code }
}
