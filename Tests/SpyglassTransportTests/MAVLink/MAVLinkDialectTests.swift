import Foundation
import Testing
@testable import SpyglassTransport

/// The CRC_EXTRA and length table against the installed pymavlink's common.xml.
@Suite struct MAVLinkDialectTests {
    @Test func theCommonTableMatchesPymavlink() throws {
        let code = """
        import json
        from pymavlink.dialects.v20 import common as m
        print(json.dumps({str(i): [c.crc_extra, c.unpacker.size] for i, c in m.mavlink_map.items()}))
        """
        let table = try JSONDecoder().decode([String: [Int]].self, from: MAVLinkFixtures.run(["-c", code]))
        let ours = Dictionary(uniqueKeysWithValues: MAVLinkDialect.common.messages.map { (String($0.key), [Int($0.value.crcExtra), $0.value.length]) })
        #expect(ours == table)
        #expect(MAVLinkDialect.common[0] == .init(crcExtra: 50, length: 9), "HEARTBEAT, minimal.xml")
        #expect(MAVLinkDialect.common[33] == .init(crcExtra: 104, length: 28), "GLOBAL_POSITION_INT")
    }
}
