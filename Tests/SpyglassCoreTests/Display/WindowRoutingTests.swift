// Two real SDL windows in this process through one SDLVideoSystem: each gets the events addressed
// to it, and a wake-up wakes only the window it was meant for.
//
// They need an X display: $DISPLAY when set (xvfb-run -a swift test), else a private Xvfb that the
// test starts and stops. With neither, the tests are skipped and say why.
import CSDL2
import Foundation
import Testing
@testable import SpyglassFeed
@testable import SpyglassDisplay
@testable import SpyglassSession
#if canImport(Glibc)
import Glibc
#endif

@MainActor
@Suite("SDL windows in one process", .serialized,
       .enabled(if: VirtualScreen.isPossible,
                "no X display: DISPLAY is unset and Xvfb is not installed (apt install xvfb, or run under xvfb-run -a)"))
struct WindowRoutingTests {
    /// Far longer than any event or wake-up takes; only reached when something is broken.
    static let deadlineMillis: Int32 = 20_000

    @Test("a key event addressed to window B reaches B only; SDL_QUIT reaches both")
    func keyEventGoesToItsWindowOnly() throws {
        try withTwoWindows { a, b in
            #expect(a.window.id != 0 && b.window.id != 0 && a.window.id != b.window.id)
            let forB = Int32(SDLK_x.rawValue), forA = Int32(SDLK_y.rawValue)
            try pushKey(forB, to: b.window.id)
            // Pushed after B's: once A has its own key, B's has been routed too (one queue, in order).
            try pushKey(forA, to: a.window.id)

            let seenByA = try #require(events(of: a, until: .key(Key(sdl: forA))), "window A never got the key addressed to it")
            #expect(!seenByA.contains(.key(Key(sdl: forB))), "window A got B's key: \(seenByA)")
            let seenByB = try #require(events(of: b, until: .key(Key(sdl: forB))), "window B never got the key addressed to it")
            #expect(!seenByB.contains(.key(Key(sdl: forA))), "window B got A's key: \(seenByB)")
            #expect(!pending(a).contains(.key(Key(sdl: forB))))
            #expect(!pending(b).contains(.key(Key(sdl: forA))))

            // An event that names no window goes to every window.
            var quit = SDL_Event()
            quit.type = SDL_QUIT.rawValue
            #expect(SDL_PushEvent(&quit) == 1, "SDL_PushEvent: \(String(cString: SDL_GetError()))")
            #expect(events(of: a, until: .quit) != nil, "window A missed SDL_QUIT")
            #expect(events(of: b, until: .quit) != nil, "window B missed SDL_QUIT")
        }
    }

    @Test("wake() on window A wakes A's wait, not B's")
    func wakeWakesOnlyItsWindow() throws {
        try withTwoWindows { a, b in
            // From another thread, as a decoder would, while A's wait sleeps on A's condition.
            let wakeA = a.waker
            Thread { wakeA.wake() }.start()
            #expect(events(of: a, until: .frameReady) != nil, "window A's wait was not woken")

            // Once a wake-up of A has been made, B has nothing of it and A still has all of it.
            try wakeFromAnotherThread(a)
            #expect(!pending(b).contains(.frameReady), "waking A woke B")
            #expect(events(of: a, until: .frameReady) != nil, "window A's wake-up went elsewhere")

            try wakeFromAnotherThread(b)
            #expect(!pending(a).contains(.frameReady), "waking B woke A")
            #expect(events(of: b, until: .frameReady) != nil, "window B's wait was not woken")
        }
    }

    // MARK: - helpers

    /// Opens windows A and B through one video system on a virtual screen, runs `body`, then
    /// closes both, shuts SDL down, and only then stops the screen (if the test started it).
    @Test("p: the window's screenshot is a PNG of what it shows, named with the feed and time")
    func aScreenshotIsAPNGOfTheWindow() throws {
        try withTwoWindows { a, _ in
            Self.paint(a, WallWindow.background)
            let dir = FileManager.default.temporaryDirectory.appendingPathComponent("shot-\(getpid())-\(UUID().uuidString)").path
            try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
            let path = ScreenshotName.path(folder: dir, name: "udp://:5600")
            #expect(path.hasPrefix("\(dir)/spyglass-udp-5600-") && path.hasSuffix("Z.png"), "\(path)")
            try a.startPNG(Self.whole(a), path: path).wait()
            let png = try #require(IMG_Load(path), "the PNG decodes: \(String(cString: SDL_GetError()))")
            defer { SDL_FreeSurface(png) }
            #expect(png.pointee.w == 320 && png.pointee.h == 180)
            // The slate background of the waiting window, at a corner no text reaches.
            var r: UInt8 = 0, g: UInt8 = 0, b: UInt8 = 0
            let bpp = Int(png.pointee.format.pointee.BytesPerPixel)
            let pixel = png.pointee.pixels.assumingMemoryBound(to: UInt8.self) + 2 * Int(png.pointee.pitch) + 2 * bpp
            var value: UInt32 = 0
            for k in 0..<bpp { value |= UInt32(pixel[k]) << (8 * UInt32(k)) }
            SDL_GetRGB(value, png.pointee.format, &r, &g, &b)
            #expect((r, g, b) == (32, 36, 44), "\((r, g, b))")
        }
    }

    /// Issue 18: `p` froze the live picture while SDL2_image wrote the PNG on the main thread
    /// (2.6–3.6 s for 1920x1080). The PNG goes to a FIFO nobody reads yet, so its write cannot end:
    /// on the main thread this test would never get past `screenshot`. It does, and the window
    /// draws again, while the write waits; once the FIFO is read, the PNG arrives whole.
    @Test("p writes the PNG off the main thread: the window draws on while the file is written")
    func aScreenshotDoesNotHoldTheWindow() throws {
        try withTwoWindows { a, _ in
            Self.paint(a, WallWindow.background)
            let fifo = FileManager.default.temporaryDirectory.appendingPathComponent("shot-\(getpid())-\(UUID().uuidString).png").path
            try #require(mkfifo(fifo, 0o600) == 0, "mkfifo: \(String(cString: strerror(errno)))")
            defer { unlink(fifo) }
            let job = try a.startPNG(Self.whole(a), path: fifo)
            Self.paint(a, (200, 10, 10))   // the main thread is free: the window draws on
            let fd = open(fifo, O_RDONLY)
            try #require(fd >= 0)
            var png: [UInt8] = []
            var chunk = [UInt8](repeating: 0, count: 65_536)
            while true {
                let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
                if n <= 0 { break }
                png += chunk[..<n]
            }
            close(fd)
            try job.wait()
            #expect(Array(png.prefix(8)) == [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A], "a PNG signature")
            #expect(png.count > 100)
        }
    }

    /// SDL2_image reports success even when the disk fills up under the PNG: a screenshot counts
    /// as written only when the file ends with its IEND chunk, and a cut one is an error.
    @Test("a screenshot cut short is not taken as written")
    func aScreenshotCutShortIsNotWritten() throws {
        try withTwoWindows { a, _ in
            Self.paint(a, WallWindow.background)
            let path = FileManager.default.temporaryDirectory.appendingPathComponent("whole-\(getpid())-\(UUID().uuidString).png").path
            defer { unlink(path) }
            try a.startPNG(Self.whole(a), path: path).wait()
            #expect(PNGJob.endsWithIEND(path), "a whole PNG ends with IEND")
            let whole = try Data(contentsOf: URL(fileURLWithPath: path))
            try whole.prefix(whole.count / 2).write(to: URL(fileURLWithPath: path))   // as a full disk leaves it
            #expect(!PNGJob.endsWithIEND(path), "half of one does not")
        }
    }

    /// Fills the whole window with `colour` and presents it.
    private static func paint(_ w: WallSurface, _ colour: (r: UInt8, g: UInt8, b: UInt8)) {
        w.fill(whole(w), colour)
        w.present([whole(w)])
    }

    private static func whole(_ w: WallSurface) -> PixelRect { PixelRect(x: 0, y: 0, width: w.size.width, height: w.size.height) }

    private func withTwoWindows(_ body: (WallSurface, WallSurface) throws -> Void) throws {
        let screen = try VirtualScreen()
        defer { screen.stop() }
        try openAndRun(on: screen, body)
    }

    private func openAndRun(on screen: VirtualScreen, _ body: (WallSurface, WallSurface) throws -> Void) throws {
        let system = try screen.whileDisplaySet { try SDLVideoSystem() }
        let a = try WallSurface(system: system, title: "A", width: 320, height: 180, position: (0, 0))
        let b = try WallSurface(system: system, title: "B", width: 320, height: 180, position: (400, 0))
        try body(a, b)
        // Windows and system go here, on the main actor (their deinits run inline), while the
        // X server is still up: Xlib exits the process when its server vanishes under it.
    }

    /// Calls `display.wake()` on another thread and returns once that call has returned. The
    /// thread holds only the window's waker, never the window: a thread that released the window
    /// last would queue its clean-up after the test's X server is gone, and Xlib ends the process.
    private func wakeFromAnotherThread(_ display: WallSurface) throws {
        let done = DispatchSemaphore(value: 0)
        let wake = display.waker
        Thread {
            wake.wake()
            done.signal()
        }.start()
        try #require(done.wait(timeout: .now() + .seconds(Int(Self.deadlineMillis / 1000))) == .success,
                     "the waking thread did not finish")
    }

    /// Pushes a key-down event for `sym` addressed to the window `windowID`.
    private func pushKey(_ sym: Int32, to windowID: UInt32) throws {
        var e = SDL_Event()
        e.key.type = SDL_KEYDOWN.rawValue
        e.key.windowID = windowID
        e.key.state = UInt8(SDL_PRESSED)
        e.key.keysym.sym = sym
        try #require(SDL_PushEvent(&e) == 1, "SDL_PushEvent: \(String(cString: SDL_GetError()))")
    }

    /// The events `display` returns up to and including `wanted`; nil if it never comes.
    private func events(of display: WallSurface, until wanted: WallInput) -> [WallInput]? {
        var seen: [WallInput] = []
        while seen.count < 10_000, let e = display.waitInput(timeoutMillis: Int(Self.deadlineMillis)) {
            seen.append(e)
            if e == wanted { return seen }
        }
        return nil
    }

    /// The events `display` has ready now, without waiting.
    private func pending(_ display: WallSurface) -> [WallInput] {
        var seen: [WallInput] = []
        while seen.count < 10_000, let e = display.waitInput(timeoutMillis: 0) { seen.append(e) }
        return seen
    }
}

/// An X display for in-process SDL tests: `$DISPLAY` when set, else a private Xvfb started here
/// (it picks a free display number itself and reports it with `-displayfd`).
///
/// Xvfb is started with `posix_spawn` and an empty signal mask: Swift Testing runs tests on
/// dispatch worker threads, which block SIGTERM, and a child started from one (as `Process`
/// would) inherits that and cannot be stopped politely.
final class VirtualScreen {
    static let xvfbPath = "/usr/bin/Xvfb"

    /// True when a display is set or Xvfb can be started.
    static var isPossible: Bool {
        ProcessInfo.processInfo.environment["DISPLAY"] != nil || FileManager.default.isExecutableFile(atPath: xvfbPath)
    }

    enum Failure: Error, CustomStringConvertible {
        case xvfb(String)
        var description: String {
            switch self { case .xvfb(let s): return "Xvfb did not start: \(s)" }
        }
    }

    /// The display name (":N").
    let name: String
    /// The server's process id when this object started it.
    private var server: pid_t?

    init() throws {
        if let display = ProcessInfo.processInfo.environment["DISPLAY"] {
            name = display
            return
        }
        let log = FileManager.default.temporaryDirectory.appendingPathComponent("xvfb-\(getpid())-\(UUID().uuidString).log").path
        defer { unlink(log) }
        var fds: [Int32] = [0, 0]
        guard pipe(&fds) == 0 else { throw Failure.xvfb("pipe: \(String(cString: strerror(errno)))") }
        let (readEnd, writeEnd) = (fds[0], fds[1])
        defer { close(readEnd) }

        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_adddup2(&actions, writeEnd, 1)
        posix_spawn_file_actions_addopen(&actions, 2, log, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        posix_spawn_file_actions_addclose(&actions, readEnd)
        posix_spawn_file_actions_addclose(&actions, writeEnd)
        var attr = posix_spawnattr_t()
        posix_spawnattr_init(&attr)
        defer { posix_spawnattr_destroy(&attr) }
        var none = sigset_t(), all = sigset_t()
        sigemptyset(&none)
        sigfillset(&all)
        posix_spawnattr_setsigmask(&attr, &none)
        posix_spawnattr_setsigdefault(&attr, &all)
        posix_spawnattr_setflags(&attr, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))

        let args = [Self.xvfbPath, "-displayfd", "1", "-screen", "0", "1024x768x24", "-nolisten", "tcp", "-noreset"]
        var argv: [UnsafeMutablePointer<CChar>?] = args.map { strdup($0) } + [nil]
        defer { for a in argv { free(a) } }
        var pid: pid_t = 0
        let rc = posix_spawn(&pid, Self.xvfbPath, &actions, &attr, &argv, environ)
        close(writeEnd)
        guard rc == 0 else { throw Failure.xvfb("posix_spawn: \(String(cString: strerror(rc)))") }
        server = pid

        // The display number and a newline, once the server accepts connections; EOF if it dies.
        var text = ""
        let deadline = Date(timeIntervalSinceNow: 30)
        while !text.hasSuffix("\n") && Date() < deadline {
            var pfd = pollfd(fd: readEnd, events: Int16(POLLIN), revents: 0)
            guard poll(&pfd, 1, 200) > 0 else { continue }
            var byte: UInt8 = 0
            guard read(readEnd, &byte, 1) == 1 else { break }
            text.append(Character(UnicodeScalar(byte)))
        }
        guard let number = Int(text.trimmingCharacters(in: .whitespacesAndNewlines)) else {
            Self.terminate(pid)
            let err = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
            throw Failure.xvfb((text.isEmpty ? "no display number within 30 s" : "it said '\(text)'") + ". \(err.suffix(500))")
        }
        name = ":\(number)"
    }

    deinit { stop() }

    /// Runs `body` with `DISPLAY` naming this screen (SDL's X11 driver reads it in `SDL_Init`),
    /// then puts the environment back as it was.
    func whileDisplaySet<T>(_ body: () throws -> T) rethrows -> T {
        guard server != nil else { return try body() }
        setenv("DISPLAY", name, 1)
        defer { unsetenv("DISPLAY") }
        return try body()
    }

    /// Stops the server if this object started it: SIGTERM, then SIGKILL if it is still there
    /// after 10 s. Returns once it has been reaped.
    func stop() {
        guard let pid = server else { return }
        server = nil
        Self.terminate(pid)
    }

    private static func terminate(_ pid: pid_t) {
        kill(pid, SIGTERM)
        var status: Int32 = 0
        if !Wait.until(timeoutSeconds: 10, { waitpid(pid, &status, WNOHANG) != 0 }) {
            kill(pid, SIGKILL)
            _ = waitpid(pid, &status, 0)
        }
    }
}
