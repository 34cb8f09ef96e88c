import Foundation
import PackagePlugin

/// Generates typed Swift from every `*.model.yml` / `*.model.json` file among a target's files
/// (declare the model as a resource): an entity type per entity with typed attribute and
/// relationship accessors and typed predicate keys.
@main
struct StoreChainModelPlugin: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: any Target) async throws -> [Command] {
        guard let target = target as? SourceModuleTarget else { return [] }
        let generator = try context.tool(named: "storechain-codegen")
        return target.sourceFiles.map(\.url)
            .filter { $0.lastPathComponent.hasSuffix(".model.yml") || $0.lastPathComponent.hasSuffix(".model.json") }
            .map { model in
                let name = model.lastPathComponent.split(separator: ".").first.map(String.init) ?? "Model"
                let output = context.pluginWorkDirectoryURL.appending(path: "\(name.capitalized)Model.generated.swift")
                return .buildCommand(
                    displayName: "Generating typed Swift from \(model.lastPathComponent)",
                    executable: generator.url, arguments: [model.path, output.path], inputFiles: [model],
                    outputFiles: [output])
            }
    }
}
