import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Measures how deep a thread's stack has ever gone: the thread runs on a stack of our own,
/// painted with a pattern first, and the deepest byte no longer holding the pattern is the
/// high-water mark. A call path whose depth grows with each call shows as a mark that moves.
final class StackProbe: @unchecked Sendable {
    private static let paint: UInt8 = 0xA5
    private let bytes: Int
    private let base: UnsafeMutableRawPointer

    /// - Parameter bytes: the thread's stack size; a body that goes deeper crashes the test.
    init(bytes: Int) {
        self.bytes = bytes
        var p: UnsafeMutableRawPointer?
        precondition(posix_memalign(&p, 65_536, bytes) == 0)
        base = p!
        memset(base, Int32(Self.paint), bytes)
    }

    deinit { free(base) }

    /// Bytes of stack used at the deepest point so far (the stack grows down from its top).
    func highWaterBytes() -> Int {
        let b = base.assumingMemoryBound(to: UInt8.self)
        var i = 0
        while i < bytes && b[i] == Self.paint { i += 1 }
        return bytes - i
    }

    /// Runs `body` on a new thread with this stack and waits for it to return.
    func run(_ body: @escaping @Sendable (StackProbe) -> Void) {
        final class Context { let probe: StackProbe; let body: @Sendable (StackProbe) -> Void
            init(_ p: StackProbe, _ b: @escaping @Sendable (StackProbe) -> Void) { probe = p; body = b } }
        var attr = pthread_attr_t()
        pthread_attr_init(&attr)
        defer { pthread_attr_destroy(&attr) }
        precondition(pthread_attr_setstack(&attr, base, bytes) == 0)
        var thread = pthread_t()
        let ctx = Unmanaged.passRetained(Context(self, body)).toOpaque()
        precondition(pthread_create(&thread, &attr, { raw in
            let c = Unmanaged<Context>.fromOpaque(raw!).takeRetainedValue()
            c.body(c.probe)
            return nil
        }, ctx) == 0)
        pthread_join(thread, nil)
    }
}
