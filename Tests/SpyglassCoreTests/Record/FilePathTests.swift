import Testing
@testable import SpyglassFeed
@testable import SpyglassDisplay

/// Recording and screenshot names are taken apart without NSString, whose path methods trapped
/// on a one-character name in Swift 6.3 (`--record b` ended the process with SIGILL).
@Suite struct FilePathTests {
    @Test func partsOfShortAndOddNames() {
        #expect(FilePath.folder("b") == "" && FilePath.name("b") == "b" && FilePath.fileExtension("b") == "")
        #expect(FilePath.folder("x/") == "x" && FilePath.folder("/b") == "/" && FilePath.folder("a/b/c.mkv") == "a/b")
        #expect(FilePath.fileExtension("flight.H264") == "h264" && FilePath.fileExtension(".hidden") == "")
        #expect(FilePath.fileExtension("dir.v2/flight") == "", "a dot in a folder is not the file's extension")
        #expect(FilePath.stem("/tmp/clip.part.mp4") == "clip.part")
    }

    @Test func aRecordingOrScreenshotNamedByOneCharacter() {
        #expect(ContainerRecorder.fileName(for: "b") == "b.mkv" && !recordsRawStream("b"))
        #expect(flightRecordingFiles(path: "b") == ["b.mkv"])
        #expect(ScreenshotName.path(folder: "p", name: "cam").hasPrefix("p/spyglass-cam-"))
        #expect(ScreenshotName.path(folder: "", name: "cam").hasPrefix("spyglass-cam-"))
    }
}
