// swift-tools-version:6.0
// Spyglass: a low-latency H.264/H.265 stream receiver for Linux.
// Pipeline: source → depacketizer → access-unit assembler → decoder → presenter → display.
import PackageDescription

let package = Package(
    name: "Spyglass",
    products: [
        .executable(name: "spyglass", targets: ["spyglass"]),
        .library(name: "SpyglassSession", targets: ["SpyglassSession"]),
    ],
    targets: [
        // libavcodec + libavformat + libavutil + libswscale (Debian's FFmpeg 5.1), one module map;
        // libavformat muxes and demuxes recordings (Matroska, MPEG-TS, fragmented MP4).
        .systemLibrary(name: "CFFmpeg", pkgConfig: "libavcodec",
                       providers: [.apt(["libavcodec-dev", "libavformat-dev", "libavutil-dev", "libswscale-dev"])]),
        // SDL2 + SDL2_ttf (status text) + SDL2_image (PNG screenshots).
        .systemLibrary(name: "CSDL2", pkgConfig: "sdl2",
                       providers: [.apt(["libsdl2-dev", "libsdl2-ttf-dev", "libsdl2-image-dev"])]),
        // libpcap, for packet captures (pcap and pcapng).
        .systemLibrary(name: "CPcap", pkgConfig: "libpcap", providers: [.apt(["libpcap-dev"])]),
        // libmicrohttpd, which serves /metrics (Prometheus text exposition).
        .systemLibrary(name: "CMicroHTTPD", pkgConfig: "libmicrohttpd", providers: [.apt(["libmicrohttpd-dev"])]),
        .systemLibrary(name: "CCurl", pkgConfig: "libcurl", providers: [.apt(["libcurl4-openssl-dev"])]),
        // libsrt (Secure Reliable Transport, Haivision): srt:// sources and `send`. The GnuTLS
        // flavour, the one Debian's libavformat links: two libsrt builds in one process (ours and
        // libavformat's) would bind each other's symbols and crash.
        .systemLibrary(name: "CSRT", pkgConfig: "srt", providers: [.apt(["libsrt-gnutls-dev"])]),
        // OpenSSL (libssl, libcrypto): TLS for rtsps:// (RTSP over TLS), certificates checked.
        .systemLibrary(name: "COpenSSL", pkgConfig: "openssl", providers: [.apt(["libssl-dev"])]),
        // GNU extensions of glibc (ppoll, accept4) that Swift's Glibc module hides.
        .target(name: "CSystem"),
        // Annex B, NAL units, RBSP, bit reading, H.264/H.265 parameter sets and SEI: pure Swift, no C.
        .target(name: "SpyglassBitstream"),
        // RTP and its H.264/H.265 payloads, RTCP, SDP, MPEG-TS packets/PES/sections, KLV: pure Swift.
        .target(name: "SpyglassTransport", dependencies: ["SpyglassBitstream"]),
        // The stages from bytes to access units, pure Swift: depacketizers (Annex B, RTP, MPEG-TS,
        // detection), the access-unit stage and assembler, the decode gate, the clocks' types.
        .target(name: "SpyglassPipeline", dependencies: ["SpyglassBitstream", "SpyglassTransport"]),
        // The sources: UDP (unicast, multicast), TCP, files and pipes, packet captures, RTSP, SRT;
        // each a ByteSource that stamps what it reads on the monotonic clock (libavutil only for the
        // MD5 of RTSP Digest authentication).
        .target(name: "SpyglassIngest", dependencies: ["SpyglassBitstream", "SpyglassTransport", "SpyglassPipeline", "CSystem", "CPcap", "CSRT", "CFFmpeg", "COpenSSL"]),
        // One feed: a source's bytes through the stages to libavcodec and the sinks (recorder,
        // framemd5, latency log), on its own thread, with its metrics registry and /metrics server.
        .target(name: "SpyglassFeed", dependencies: ["SpyglassBitstream", "SpyglassTransport", "SpyglassPipeline", "SpyglassIngest", "CFFmpeg", "CMicroHTTPD", "CSystem", "CCurl"]),
        // The window: one SDL video system, a single feed's window and the wall of tiles, overlays.
        .target(name: "SpyglassDisplay", dependencies: ["SpyglassBitstream", "SpyglassTransport", "SpyglassPipeline", "SpyglassIngest", "SpyglassFeed", "CFFmpeg", "CSDL2"]),
        // A run of play, probe, replay, send or bench, assembled from feeds, windows and senders.
        .target(name: "SpyglassSession", dependencies: ["SpyglassBitstream", "SpyglassTransport", "SpyglassPipeline", "SpyglassIngest", "SpyglassFeed", "SpyglassDisplay", "CFFmpeg", "CSDL2", "CSystem", "CPcap", "CMicroHTTPD", "CSRT"]),
        .executableTarget(name: "spyglass", dependencies: ["SpyglassSession", "SpyglassFeed", "SpyglassDisplay", "SpyglassBitstream", "SpyglassTransport", "SpyglassPipeline", "SpyglassIngest"]),
        // What every test target shares: the seeded random generator.
        .target(name: "TestSupport", path: "Tests/TestSupport"),
        .testTarget(name: "SpyglassBitstreamTests", dependencies: ["SpyglassBitstream", "TestSupport"]),
        .testTarget(name: "SpyglassTransportTests", dependencies: ["SpyglassTransport", "SpyglassBitstream", "TestSupport"]),
        .testTarget(name: "SpyglassPipelineTests", dependencies: ["SpyglassPipeline", "SpyglassTransport", "SpyglassBitstream", "TestSupport"]),
        .testTarget(name: "SpyglassIngestTests", dependencies: ["SpyglassIngest", "TestSupport"]),
        .testTarget(name: "SpyglassCoreTests", dependencies: ["SpyglassSession", "SpyglassFeed", "SpyglassDisplay", "SpyglassBitstream", "SpyglassTransport", "SpyglassPipeline", "SpyglassIngest", "TestSupport", "CFFmpeg", "CSDL2"]),
    ]
)
