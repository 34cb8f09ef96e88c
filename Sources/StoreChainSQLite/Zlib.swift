import CZlib
import Foundation

/// zlib compression of cache payloads.
enum Zlib {
    /// The compressed bytes, or `nil` when compressing fails or would not save space. Payloads
    /// under 256 bytes stay as they are: they save little, and inflating one costs more than
    /// decoding it.
    static func compressIfSmaller(_ data: Data) -> Data? {
        guard data.count >= 256 else { return nil }
        var length = compressBound(uLong(data.count))
        var output = Data(count: Int(length))
        let status = output.withUnsafeMutableBytes { target in
            data.withUnsafeBytes { source in
                compress2(
                    target.bindMemory(to: Bytef.self).baseAddress, &length,
                    source.bindMemory(to: Bytef.self).baseAddress, uLong(data.count), Z_BEST_SPEED)
            }
        }
        guard status == Z_OK, Int(length) < data.count else { return nil }
        return output.prefix(Int(length))
    }

    /// The original bytes of a payload compressed from `originalSize` bytes.
    static func decompress(_ data: Data, originalSize: Int) throws(StoreChainSQLiteError) -> Data {
        // zlib cannot expand more than about 1,032 to 1; a larger claim is a damaged size field,
        // and believing it would allocate up to a gigabyte.
        guard originalSize >= 0, originalSize <= 1 << 30, originalSize <= (data.count + 64) * 1_100 else {
            throw StoreChainSQLiteError("a compressed payload claims \(originalSize) bytes")
        }
        var length = uLong(originalSize)
        var output = Data(count: originalSize)
        let status = output.withUnsafeMutableBytes { target in
            data.withUnsafeBytes { source in
                uncompress(
                    target.bindMemory(to: Bytef.self).baseAddress, &length,
                    source.bindMemory(to: Bytef.self).baseAddress, uLong(data.count))
            }
        }
        guard status == Z_OK, Int(length) == originalSize else {
            throw StoreChainSQLiteError("a compressed payload does not decompress (zlib status \(status))")
        }
        return output
    }
}

/// A payload or file problem inside the SQLite cache.
package struct StoreChainSQLiteError: Error, CustomStringConvertible {
    package let description: String
    package init(_ description: String) { self.description = description }
}
