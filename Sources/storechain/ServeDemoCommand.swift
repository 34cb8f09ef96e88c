import ArgumentParser
import Foundation
import StoreChainDemoBackend

/// `storechain serve-demo`: the demo backend on its own, until interrupted.
struct ServeDemoCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve-demo",
        abstract: "Run the demo music backend (v1 and v2 APIs) on 127.0.0.1."
    )

    @Option(help: "The port to listen on (0 picks a free one).")
    var port: Int = 8080

    @Option(help: "How many bands the generated catalog has.")
    var bands: Int = 200

    func run() async throws {
        let backend = try DemoBackend(bands: bands)
        let bound = try await backend.start(port: port)
        // Written straight to the file descriptor, unbuffered: scripts and tests read the
        // address from a pipe while the server runs.
        let banner = """
            Demo backend on http://127.0.0.1:\(bound)
              v1: GET /v1/catalog
              v2: GET /v2/bands, /v2/bands/search?name=, /v2/bands/{id}, /v2/bands/{id}/albums,
                  /v2/albums?cursor=, /v2/albums/{id}, /v2/tracks?ids=1,2, /v2/tracks/{id}; POST, PATCH, DELETE
            Press Ctrl-C to stop.

            """
        FileHandle.standardOutput.write(Data(banner.utf8))
        while !Task.isCancelled {
            try await Task.sleep(for: .seconds(3600))
        }
        await backend.stop()
    }
}
