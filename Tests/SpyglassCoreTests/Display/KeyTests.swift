import Testing
@testable import SpyglassDisplay

/// ``Key``: one map from SDL key codes for the single window and the wall.
@Suite struct KeyTests {
    @Test func everyKeyGoesToItsCodeAndBack() {
        let keys: [Key] = [.quit, .escape, .fullscreen, .screenshot, .gravity, .lastSecond, .linkStatistics, .nextFeed,
                           .pause, .step, .seekBack, .seekForward, .slower, .faster] + (0..<9).map { .feed($0) }
        for key in keys {
            #expect(Key(sdl: key.sdlCode) == key, "\(key) → \(key.sdlCode) → \(Key(sdl: key.sdlCode))")
        }
        #expect(Set(keys.map(\.sdlCode)).count == keys.count, "no two keys share a code")
    }

    @Test func theCodesAreSDLs() {
        #expect(Key(sdl: 113) == .quit && Key(sdl: 27) == .escape && Key(sdl: 9) == .nextFeed)
        #expect(Key(sdl: 49) == .feed(0) && Key(sdl: 57) == .feed(8))
        #expect(Key(sdl: Int32(bitPattern: 0x4000_0050)) == .seekBack, "SDLK_LEFT")
        #expect(Key(sdl: 120) == .other(120) && Key(sdl: 48) == .other(48), "x and 0 do nothing")
    }
}
