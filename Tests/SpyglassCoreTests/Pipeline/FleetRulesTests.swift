import Foundation
import Testing

/// The fleet files in tools/prometheus: the alerting rules are valid and do what they say
/// (`promtool test rules`: a stalled feed, glass-to-glass p99 over target, loss over 1 %, an
/// aircraft battery under 20 %, telemetry lost for 5 s), and
/// the Grafana dashboard is valid JSON with one row per feed.
@Suite struct FleetRulesTests {
    static let dir = Fixtures.root.appendingPathComponent("tools/prometheus").path
    static var available: Bool { FileManager.default.isExecutableFile(atPath: "/usr/bin/promtool") }

    @Test(.enabled(if: available, "promtool missing: run tools/setup (prometheus)"))
    func theAlertingRulesPassTheirUnitTests() throws {
        let (rc1, out1, err1) = try Fixtures.run("/usr/bin/promtool", ["check", "rules", "\(Self.dir)/rules.yml"])
        #expect(rc1 == 0, "\(out1) \(err1)")
        let (rc2, out2, err2) = try Fixtures.run("/usr/bin/promtool", ["test", "rules", "\(Self.dir)/rules_test.yml"])
        #expect(rc2 == 0, "\(out2) \(err2)")
        #expect(out2.contains("SUCCESS"))
    }

    @Test func theDashboardRepeatsARowPerFeed() throws {
        let data = try Data(contentsOf: URL(fileURLWithPath: "\(Self.dir)/grafana-dashboard.json"))
        let json = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        let panels = try #require(json["panels"] as? [[String: Any]])
        #expect(panels.contains { $0["type"] as? String == "row" && $0["repeat"] as? String == "feed" })
        #expect(panels.contains { $0["type"] as? String == "heatmap" })
        #expect(panels.contains { $0["type"] as? String == "state-timeline" })
    }
}
