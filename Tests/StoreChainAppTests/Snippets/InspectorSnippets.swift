// swift-format-ignore-file

import Foundation
import StoreChainInspector
import StoreChainPipeline

// The inspector's code block in README.md, compiled here (never run).

func servingTheInspector(pipelineURL: URL) async throws {
    // snippet begin
    let inspector = Inspector(pipeline: try Pipeline.load(contentsOf: pipelineURL))
    let chain = inspector.chain                 // the app's chain
    try await inspector.serve(port: 7070)
    // snippet end
    _ = chain
}
