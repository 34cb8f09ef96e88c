import Observation
import StoreChain
import Synchronization
import Testing

/// An app's own `@Observable` model in a file that imports StoreChain: the macro's expansion
/// names `Observation.ObservationRegistrar` and `Observation.Observable`, which did not compile
/// while StoreChain had a type named `Observation` (now `FetchObservation`).
@Observable final class PlayerModel {
    var playing = false
}

@Suite struct ObservableBesideStoreChainTests {
    @Test func anAppsObservableModelCompilesAndIsTracked() {
        let model = PlayerModel()
        let changed = Mutex(false)
        withObservationTracking {
            _ = model.playing
        } onChange: {
            changed.withLock { $0 = true }
        }
        model.playing = true
        #expect(changed.withLock { $0 })
    }
}
