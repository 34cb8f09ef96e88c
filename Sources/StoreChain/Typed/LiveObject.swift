import Observation

/// One object's values as an `Observable` object: a SwiftUI view (or a `withObservationTracking`
/// caller) that reads `values` updates when they change, here or in another context whose save
/// reaches this chain.
///
/// ```swift
/// let band = try LiveObject(bands[0])
/// // in a SwiftUI view: Text(band.values?.name ?? "…")
/// ```
///
/// It follows a fetch of the object by its key (see `LiveResults`); `values` is `nil` until the
/// first result and after the object is deleted.
public final class LiveObject<Object: TypedObject>: Observable, Sendable {
    private let results: LiveResults<Object>
    /// The object followed.
    public let objectID: ObjectID

    /// The object's attribute values as its context holds them.
    public var values: Object.Values? { results.objects.first?.loaded }
    /// Whether the first result has arrived; then `values == nil` means the object is gone.
    public var isLoaded: Bool { results.isLoaded }
    /// The error that ended the observation, if one did.
    public var error: (any Error)? { results.error }

    /// Follows `object`.
    ///
    /// - Throws: `invalid-request` for an object not saved yet (it has no key to follow).
    public init(_ object: Object, updatesOnMainActor: Bool = false) throws(StoreChainError) {
        let context = object.object.context
        guard let key = object.objectID.key, let entity = context.model.entity(named: Object.entityName) else {
            throw StoreChainError(
                .invalidRequest, "\(object.objectID) has no key to follow until it is saved",
                suggestion: "save the context first, then make the LiveObject")
        }
        let request = FetchRequest(
            entity: Object.entityName,
            predicate: .comparison(Comparison(.keyPath([entity.key]), .equal, .constant(key))))
        objectID = object.objectID
        results = LiveResults(TypedObservation(context.observe(request)), updatesOnMainActor: updatesOnMainActor)
    }
}
