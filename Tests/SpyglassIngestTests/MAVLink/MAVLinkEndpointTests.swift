import Testing
@testable import SpyglassIngest

/// `--mavlink URL`: the three forms parse; every mistake gets a line that says what is wrong.
@Suite struct MAVLinkEndpointTests {
    @Test func theThreeFormsParse() throws {
        #expect(try MAVLinkEndpoint(parsing: "udp://:14550") == .udpListen(host: nil, port: 14550))
        #expect(try MAVLinkEndpoint(parsing: "udp://[::1]:14550") == .udpListen(host: "::1", port: 14550))
        #expect(try MAVLinkEndpoint(parsing: "udpout://10.0.0.2:14550") == .udpOut(host: "10.0.0.2", port: 14550))
        #expect(try MAVLinkEndpoint(parsing: "serial:///dev/ttyUSB0") == .serial(path: "/dev/ttyUSB0", baud: 57600))
        #expect(try MAVLinkEndpoint(parsing: "serial:///dev/ttyACM0?baud=115200") == .serial(path: "/dev/ttyACM0", baud: 115200))
        #expect(try MAVLinkEndpoint(parsing: "udp://[::1]:14550").description == "udp://[::1]:14550")
    }

    @Test(arguments: [
        ("udp:14550", "did you mean udp://:14550?"),
        ("udp://:99999", "the port must be 1-65535"),
        ("udp://:14550?bogus=1", "takes no options (?bogus=1)"),
        ("udp://nowhere", "no port"),
        ("udpout://:14550", "needs the host"),
        ("tcp://x:1", "unknown scheme tcp://"),
        ("serial://ttyUSB0", "a device path"),
        ("serial:///dev/ttyUSB0?baud=12345", "baud must be one of"),
    ])
    func mistakesAreNamed(text: String, says: String) {
        #expect(throws: SourceError.self) { try MAVLinkEndpoint(parsing: text) }
        do { _ = try MAVLinkEndpoint(parsing: text) } catch { #expect("\(error)".contains(says), "\(error)") }
    }
}
