import CSDL2
import Foundation
import Synchronization
import SpyglassIngest

/// Writes screenshots as PNG files off the main thread (issue 18: a 1920x1080 PNG took 2.6–3.6 s
/// in SDL2_image, and with the write on the main thread no picture was presented meanwhile).
///
/// The window's pixels are copied on the main thread (8-bit RGB, row by row: a read-back of a
/// few milliseconds); a thread of the job's own then encodes and writes them
/// (`IMG_SavePNG` on a software surface of its own, which needs no video system) and logs
/// "screenshot: PATH" or why not. ``waitForAll()`` holds the exit until every PNG asked for is
/// written.
public final class PNGJob: Sendable {
    /// Where the PNG goes.
    public let path: String
    private let outcome = Mutex<Result<Void, ScreenshotError>?>(nil)
    private let finished = DispatchSemaphore(value: 0)

    /// Why a screenshot was not written.
    public struct ScreenshotError: Error, CustomStringConvertible {
        public let description: String
    }

    private static let pending = Mutex<[PNGJob]>([])

    /// Starts writing `rgb` (`width` x `height` pixels, 3 bytes each, rows without padding) to
    /// `path` on a thread of its own.
    init(rgb: [UInt8], width: Int, height: Int, path: String) {
        self.path = path
        Self.pending.withLock { $0.append(self) }
        let thread = Thread { [self] in
            let result = Self.encode(rgb, width: width, height: height, path: path)
            outcome.withLock { $0 = result }
            switch result {
            case .success: Log.info("screenshot: \(path)")
            case .failure(let e): Log.error("screenshot: \(e)")
            }
            Self.pending.withLock { $0.removeAll { $0 === self } }
            finished.signal()
        }
        thread.name = "png"
        thread.start()
    }

    /// Waits until the file is written (or failed).
    /// - Throws: ``ScreenshotError`` naming the path and SDL's reason when it was not written.
    public func wait() throws {
        finished.wait()
        finished.signal()   // later waits return at once
        if case .failure(let e) = outcome.withLock({ $0 }) { throw e }
    }

    /// Waits for every PNG still being written (at exit: a screenshot asked for is never lost).
    public static func waitForAll() {
        for job in pending.withLock({ $0 }) { try? job.wait() }
    }

    /// True when the regular file at `path` ends with a PNG's IEND chunk (length 0, "IEND", its CRC).
    static func endsWithIEND(_ path: String) -> Bool {
        guard let h = FileHandle(forReadingAtPath: path) else { return false }
        defer { try? h.close() }
        guard let size = try? h.seekToEnd(), size >= 12 else { return false }
        try? h.seek(toOffset: size - 12)
        let tail = [UInt8]((try? h.read(upToCount: 12)) ?? Data())
        return tail == [0, 0, 0, 0, 0x49, 0x45, 0x4E, 0x44, 0xAE, 0x42, 0x60, 0x82]
    }

    private static func encode(_ rgb: [UInt8], width: Int, height: Int, path: String) -> Result<Void, ScreenshotError> {
        var pixels = rgb
        return pixels.withUnsafeMutableBytes { p -> Result<Void, ScreenshotError> in
            guard width > 0, height > 0, p.count >= width * height * 3,
                  let surface = SDL_CreateRGBSurfaceWithFormatFrom(p.baseAddress, Int32(width), Int32(height), 24,
                                                                   Int32(width * 3), SDL_PIXELFORMAT_RGB24.rawValue) else {
                return .failure(ScreenshotError(description: "\(path): no picture to write"))
            }
            defer { SDL_FreeSurface(surface) }
            guard IMG_SavePNG(surface, path) == 0 else {
                return .failure(ScreenshotError(description: "\(path): \(String(cString: SDL_GetError()))"))
            }
            // SDL2_image reports success even when the disk filled up under it: a file counts as
            // written only when it ends with the IEND chunk (PNG, ISO/IEC 15948 §11.2.5). (A pipe
            // or a device cannot be read back; what went into it is taken as written.)
            var st = stat()
            let regular = stat(path, &st) == 0 && (st.st_mode & S_IFMT) == S_IFREG
            guard !regular || Self.endsWithIEND(path) else {
                unlink(path)
                return .failure(ScreenshotError(description: "\(path): the PNG could not be written whole (disk full?)"))
            }
            return .success(())
        }
    }
}
