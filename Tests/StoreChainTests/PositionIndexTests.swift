import Testing

@testable import StoreChain

@Suite struct PositionIndexTests {
    /// Keys at positions in an array, as an owner holds them; removed keys leave `nil`.
    private struct Owner {
        var keys: [Int?] = []
        var index = PositionIndex()
        /// A weak hash, so that many keys share a bucket and probe sequences run long.
        let hash: @Sendable (Int) -> Int

        func position(of key: Int) -> Int? {
            index.position(hash: hash(key)) { keys[$0] == key }
        }

        mutating func insert(_ key: Int) {
            index.insert(keys.count, hash: hash(key))
            keys.append(key)
        }

        mutating func remove(_ key: Int) -> Int? {
            let position = index.remove(hash: hash(key)) { keys[$0] == key }
            if let position { keys[position] = nil }
            return position
        }

        mutating func compact() {
            var newPositions: [Int] = []
            var kept = 0
            for key in keys {
                newPositions.append(key == nil ? -1 : kept)
                if key != nil { kept += 1 }
            }
            keys.removeAll { $0 == nil }
            index.remapPositions { newPositions[$0] }
        }
    }

    /// How keys are hashed: well, into a few buckets, or with equal stored bits.
    enum Hashing: CaseIterable {
        case full, fourBuckets, equalLowBits

        func hash(_ key: Int) -> Int {
            switch self {
            case .full: key.hashValue
            case .fourBuckets: key % 4
            case .equalLowBits: key << 32
            }
        }
    }

    @Test(arguments: Hashing.allCases)
    func findsWhatADictionaryFindsUnderRandomInsertsRemovalsAndCompactions(_ hashing: Hashing) {
        var generator = SplitMix64(seed: 7)
        var owner = Owner(hash: hashing.hash)
        var reference: [Int: Int] = [:]
        for step in 0..<5_000 {
            let key = Int(generator.next() % 600)
            switch generator.next() % 10 {
            case 0..<5:
                if reference[key] == nil {
                    reference[key] = owner.keys.count
                    owner.insert(key)
                }
            case 5..<9:
                let removed = owner.remove(key)
                #expect(removed == reference.removeValue(forKey: key), "step \(step), key \(key)")
            default:
                owner.compact()
                reference = Dictionary(
                    uniqueKeysWithValues: owner.keys.enumerated().compactMap { position, key in
                        key.map { ($0, position) }
                    })
            }
            #expect(owner.index.count == reference.count)
        }
        for key in 0..<600 {
            #expect(owner.position(of: key) == reference[key], "\(hashing): key \(key)")
        }
    }

    @Test func anEmptyIndexFindsNothingAndRemovesNothing() {
        var index = PositionIndex()
        #expect(index.position(hash: 3) { _ in true } == nil)
        #expect(index.remove(hash: 3) { _ in true } == nil)
        index.insert(0, hash: 3)
        index.removeAll()
        #expect(index.count == 0)
        #expect(index.position(hash: 3) { _ in true } == nil)
    }
}
