import Foundation
import PackagePlugin

/// `swift package storechain-validate [--env NAME=VALUE …] [--ignore-type TYPE …]`: checks every
/// pipeline and model file in the package (`*.pipeline.yml`, `*.pipeline.json`, `*.model.yml`,
/// `*.model.json`, outside `.build`) with `storechain validate`, and fails when any has a problem.
/// The arguments are passed on to `storechain validate`.
///
/// The plugin builds `storechain` when it runs (`packageManager.build`) instead of depending on
/// it: SwiftPM builds a plugin's dependencies for the host with every build of the package, a
/// second copy of everything the tool uses.
@main
struct StoreChainValidatePlugin: CommandPlugin {
    func performCommand(context: PluginContext, arguments: [String]) async throws {
        let tool = try buildTool()
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
        process.executableURL = tool
        process.arguments = ["validate"] + arguments + files.sorted()
        try process.run()
        process.waitUntilExit()
        if process.terminationStatus != 0 {
            Diagnostics.error("storechain validate found problems (see above)")
            throw ExitCode(process.terminationStatus)
        }
    }

    /// Builds the `storechain` product and returns its executable.
    private func buildTool() throws -> URL {
        let result = try packageManager.build(.product("storechain"), parameters: .init(configuration: .debug))
        guard result.succeeded,
            let tool = result.builtArtifacts.first(where: {
                $0.kind == .executable && $0.url.lastPathComponent == "storechain"
            })
        else {
            Diagnostics.error("building storechain for storechain-validate failed:\n\(result.logText)")
            throw ExitCode(1)
        }
        return tool.url
    }
}

struct ExitCode: Error {
    let code: Int32
    init(_ code: Int32) { self.code = code }
}
