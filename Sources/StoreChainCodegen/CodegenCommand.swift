import Foundation
import StoreChain
import StoreChainModelFile

/// `storechain-codegen MODEL-FILE OUTPUT.swift`: writes typed Swift for a model file (run by the
/// StoreChainModelPlugin build-tool plugin).
@main
enum CodegenCommand {
    static func main() {
        let arguments = CommandLine.arguments
        guard arguments.count == 3 else {
            FileHandle.standardError.write(Data("usage: storechain-codegen MODEL-FILE OUTPUT.swift\n".utf8))
            exit(2)
        }
        let input = URL(filePath: arguments[1])
        do {
            let model = try ModelFile.load(contentsOf: input)
            let text = try SwiftModelGenerator(model: model, source: input.lastPathComponent).generate()
            try text.write(to: URL(filePath: arguments[2]), atomically: true, encoding: .utf8)
        } catch let failure as ValidationFailure {
            for error in failure.errors { FileHandle.standardError.write(Data("error: \(error)\n".utf8)) }
            exit(1)
        } catch {
            FileHandle.standardError.write(Data("error: \(error)\n".utf8))
            exit(1)
        }
    }
}
