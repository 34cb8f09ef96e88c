import ArgumentParser
import Foundation
import StoreChainInspector

/// `storechain inspect`: the inspector's page for a pipeline, until interrupted.
struct InspectCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "inspect",
        abstract: "Serve a local page that shows the pipeline, runs queries and shows what the chain did.",
        discussion: """
            The page shows the handlers in order with their options, a query console whose
            answer comes with a waterfall of every request the chain made (sub-requests under
            the request they serve, who answered, each HTTP exchange), the caches with actions
            to clear them, and each request as it happens.

            Example:
              storechain serve-demo --port 8080 &
              STORECHAIN_DEMO_URL=http://127.0.0.1:8080 \\
                storechain inspect --pipeline Examples/Bandcamp/v2.pipeline.yml --port 7070
            """
    )

    @OptionGroup var pipelineOption: PipelineOption

    @Option(help: "The port to listen on (0 picks a free one).")
    var port: Int = 7070

    @Option(help: "The address to listen on; anything but loopback lets other machines use the page.")
    var host: String = "127.0.0.1"

    func run() async throws {
        try await Output.reportingFailure {
            let inspector = Inspector(pipeline: try pipelineOption.load())
            let bound = try await inspector.serve(host: host, port: port)
            // Unbuffered: scripts and tests read the address from a pipe while the page is served.
            let shown = host == "0.0.0.0" ? "127.0.0.1" : host
            FileHandle.standardOutput.write(
                Data("Inspector on http://\(shown):\(bound)\nPress Ctrl-C to stop.\n".utf8))
            while !Task.isCancelled {
                try await Task.sleep(for: .seconds(3600))
            }
            await inspector.stop()
        }
    }
}
