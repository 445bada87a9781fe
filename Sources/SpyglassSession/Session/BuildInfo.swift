import CFFmpeg
import CMicroHTTPD
import CPcap
import CSDL2
import CSRT

/// What `spyglass --version` prints: our version and the versions of the C libraries this process
/// actually loaded (read at run time, so a distribution upgrade shows).
public enum BuildInfo {
    /// Spyglass's own version (semantic versioning; the minor number counts landed stops).
    public static let version = "0.14.0"

    /// One line per loaded library, e.g. `libavcodec 59.37.100`.
    public static func libraryLines() -> [String] {
        func triple(_ v: UInt32) -> String { "\(v >> 16).\((v >> 8) & 0xFF).\(v & 0xFF)" }
        var sdl = SDL_version()
        SDL_GetVersion(&sdl)
        let ttf = TTF_Linked_Version().pointee
        return [
            "libavcodec \(triple(avcodec_version())), libavutil \(triple(avutil_version())), libswscale \(triple(swscale_version()))",
            "SDL \(sdl.major).\(sdl.minor).\(sdl.patch), SDL_ttf \(ttf.major).\(ttf.minor).\(ttf.patch)",
            String(cString: pcap_lib_version()),
            "libmicrohttpd \(String(cString: MHD_get_version()))",
            "libsrt \(triple(srt_getversion()))",
        ]
    }
}
