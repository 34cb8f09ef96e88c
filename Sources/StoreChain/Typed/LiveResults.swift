import Observation
import Synchronization

/// A fetch's current result as an `Observable` object: a SwiftUI view that reads `objects`
/// updates when the result changes, and so does any `withObservationTracking` caller (Linux
/// included).
///
/// ```swift
/// let albums = LiveResults(Album.observe(context, where: Album.Keys.year >= 2000, sortedBy: [.year]))
/// // in a SwiftUI view: ForEach(albums.objects, id: \.objectID) { Text($0.loaded?.title ?? "…") }
/// ```
///
/// It follows the observation (`ObjectContext.observe(_:)`): a new result after every change that
/// alters it, including a change of a value of an object in it. It stops when it is released.
/// `updatesOnMainActor: true` applies each result on the main actor, as SwiftUI wants; otherwise
/// on the task that follows the observation.
public final class LiveResults<Object: TypedObject>: Observable, Sendable {
    private struct State {
        var objects: [Object] = []
        var isLoaded = false
        var error: (any Error)?
    }

    private let state = Mutex(State())
    private let registrar = ObservationRegistrar()
    private let feed = Mutex<Task<Void, Never>?>(nil)

    /// The current result; empty until the first one arrives.
    public var objects: [Object] {
        registrar.access(self, keyPath: \.objects)
        return state.withLock { $0.objects }
    }

    /// Whether a result has arrived.
    public var isLoaded: Bool {
        registrar.access(self, keyPath: \.isLoaded)
        return state.withLock { $0.isLoaded }
    }

    /// The error that ended the observation (its first fetch failed, or a later one failed for
    /// good); `objects` keeps the last result.
    public var error: (any Error)? {
        registrar.access(self, keyPath: \.error)
        return state.withLock { $0.error }
    }

    /// Follows `observation`; with `updatesOnMainActor`, its properties change on the main actor.
    public init(_ observation: TypedObservation<Object>, updatesOnMainActor: Bool = false) {
        let task = Task { [weak self] in
            do {
                for try await objects in observation {
                    guard let self else { return }
                    await self.apply(.result(objects), onMainActor: updatesOnMainActor)
                }
            } catch {
                await self?.apply(.failure(error), onMainActor: updatesOnMainActor)
            }
        }
        feed.withLock { $0 = task }
    }

    deinit {
        feed.withLock { $0?.cancel() }
    }

    private enum Update: Sendable {
        case result([Object])
        case failure(any Error)
    }

    private func apply(_ update: Update, onMainActor: Bool) async {
        if onMainActor {
            await MainActor.run { self.apply(update) }
        } else {
            apply(update)
        }
    }

    /// Changes the state, then tells observers (so one that reads at once sees the new state).
    private func apply(_ update: Update) {
        let wasLoaded = state.withLock { state in
            let wasLoaded = state.isLoaded
            switch update {
            case .result(let objects):
                state.objects = objects
                state.isLoaded = true
            case .failure(let error):
                state.error = error
            }
            return wasLoaded
        }
        switch update {
        case .result:
            registrar.withMutation(of: self, keyPath: \.objects) {}
            if !wasLoaded { registrar.withMutation(of: self, keyPath: \.isLoaded) {} }
        case .failure:
            registrar.withMutation(of: self, keyPath: \.error) {}
        }
    }
}
