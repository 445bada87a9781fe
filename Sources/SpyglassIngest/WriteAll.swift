#if canImport(Glibc)
import Glibc
#endif

/// Writes all of `bytes` to a descriptor: `write(2)`, or `send(2)` when `sendFlags` are given
/// (e.g. `MSG_NOSIGNAL` on a socket whose peer may be gone). A short write is continued, and a
/// call interrupted by a signal (EINTR) is made again.
///
/// Any other failure, or a call that writes nothing, ends it; `errno` is then the failed call's
/// (EAGAIN on a non-blocking descriptor is such a failure: nothing here waits).
/// - Returns: bytes written, `bytes.count` when all went out.
@discardableResult
package func writeAll(_ fd: Int32, _ bytes: UnsafeRawBufferPointer, sendFlags: Int32? = nil) -> Int {
    var off = 0
    while off < bytes.count {
        let start = bytes.baseAddress! + off
        let n = sendFlags.map { send(fd, start, bytes.count - off, $0) } ?? write(fd, start, bytes.count - off)
        if n < 0 && errno == EINTR { continue }
        if n <= 0 { break }
        off += n
    }
    return off
}

/// ``writeAll(_:_:sendFlags:)`` for a byte array.
/// - Returns: bytes written, `bytes.count` when all went out.
@discardableResult
package func writeAll(_ fd: Int32, _ bytes: [UInt8], sendFlags: Int32? = nil) -> Int {
    bytes.withUnsafeBytes { writeAll(fd, $0, sendFlags: sendFlags) }
}
