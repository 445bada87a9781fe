import Foundation
import Testing
@testable import SpyglassTransport

/// The decoded messages against the values tools/mavlink-vehicle says it sent, each within its
/// field's quantization (degE7, mm, cm/s, cdeg, float32).
@Suite struct MAVLinkMessageTests {
    static func messages(_ s: VehicleStream) -> [MAVLinkMessage] {
        MAVLinkFixtures.frames(s.bytes).compactMap { MAVLinkMessage($0) }
    }

    static func near(_ a: Double?, _ b: Double, _ tolerance: Double) -> Bool {
        a.map { abs($0 - b) <= tolerance } ?? false
    }

    @Test func heartbeatStatusAndBatteryDecode() throws {
        let s = try MAVLinkFixtures.ardupilot.get(), v = s.info
        let m = Self.messages(s)
        let hb = try #require(m.lazy.compactMap { if case .heartbeat(let x) = $0 { x } else { nil } }.first)
        #expect(hb.type == UInt8(v.vehicleType) && hb.autopilot == UInt8(v.autopilotId) && hb.customMode == v.customMode)
        #expect(hb.armed && hb.baseMode == UInt8(v.baseMode) && hb.modeName == v.modeName)
        let sys = try #require(m.lazy.compactMap { if case .sysStatus(let x) = $0 { x } else { nil } }.first)
        #expect(Self.near(sys.batteryVolts, v.batteryVolts, 0.0005) && Self.near(sys.batteryAmps, v.batteryCurrentAmps, 0.005))
        #expect(sys.batteryRemainingPercent == v.batteryRemainingPercent && sys.dropRateCommPercent == v.dropRateCommPercent)
        #expect(sys.loadPercent == 25.3 && sys.errorsComm == 3)
        let bat = try #require(m.lazy.compactMap { if case .batteryStatus(let x) = $0 { x } else { nil } }.first)
        #expect(bat.cellVolts == [3.95, 3.95, 3.95, 3.95] && Self.near(bat.totalVolts, v.batteryVolts, 0.0005))
        #expect(bat.remainingPercent == v.batteryRemainingPercent && Self.near(bat.currentAmps, v.batteryCurrentAmps, 0.005))
        #expect(bat.temperatureCelsius == 28.5 && bat.consumedMilliampHours == 1320 && bat.consumedJoules == 4_752_000)
        #expect(bat.timeRemainingSeconds == nil)
        let radio = try #require(m.lazy.compactMap { if case .radioStatus(let x) = $0 { x } else { nil } }.first)
        #expect(radio.rssi == v.rssi && radio.remoteRSSI == v.remrssi && radio.noise == v.noise && radio.remoteNoise == v.remnoise)
        #expect(radio.txBufferPercent == 92 && radio.rxErrors == 2 && radio.fixed == 1)
        let text = try #require(m.lazy.compactMap { if case .statusText(let x) = $0 { x } else { nil } }.first)
        #expect(text.text == v.statustextFirst && text.severity == UInt8(v.statustextSeverity))
    }

    @Test func positionAndMotionDecode() throws {
        let s = try MAVLinkFixtures.ardupilot.get(), v = s.info
        let m = Self.messages(s)
        let gps = try #require(m.lazy.compactMap { if case .gpsRawInt(let x) = $0 { x } else { nil } }.first)
        #expect(gps.fixType == UInt8(v.gpsFixType) && gps.satellitesVisible == v.satellites && gps.hdop == v.gpsHdop)
        #expect(Self.near(gps.latitude, v.latDeg, 0.6e-7) && Self.near(gps.longitude, v.lonDeg, 0.6e-7))
        #expect(Self.near(gps.altitudeMSL, v.altMslM, 0.0005) && gps.groundSpeed == v.groundSpeedMps)
        #expect(gps.courseOverGround == Double(v.headingDeg) && gps.timeMicros == 1_764_600_000_000_000)
        let pos = try #require(m.lazy.compactMap { if case .globalPositionInt(let x) = $0 { x } else { nil } }.first)
        #expect(Self.near(pos.latitude, v.latDeg, 0.6e-7) && Self.near(pos.longitude, v.lonDeg, 0.6e-7))
        #expect(Self.near(pos.relativeAltitude, v.relativeAltM, 0.0005) && Self.near(pos.altitudeMSL, v.altMslM, 0.0005))
        #expect(pos.heading == Double(v.headingDeg) && pos.velocityNorth == -2.83 && pos.velocityDown == -0.1)
        let att = try #require(m.lazy.compactMap { if case .attitude(let x) = $0 { x } else { nil } }.first)
        #expect(Self.near(att.roll, v.rollRad, 1e-7) && Self.near(att.pitch, v.pitchRad, 1e-7) && Self.near(att.yaw, v.yawRad, 1e-6))
        let hud = try #require(m.lazy.compactMap { if case .vfrHUD(let x) = $0 { x } else { nil } }.first)
        #expect(Self.near(hud.groundSpeed, v.groundSpeedMps, 1e-6) && Self.near(hud.climb, v.climbMps, 1e-7))
        #expect(hud.heading == v.headingDeg && Self.near(hud.airspeed, v.airspeedMps, 1e-6) && hud.throttlePercent == 45)
        let home = try #require(m.lazy.compactMap { if case .homePosition(let x) = $0 { x } else { nil } }.first)
        #expect(Self.near(home.latitude, v.homeLatDeg, 0.6e-7) && Self.near(home.longitude, v.homeLonDeg, 0.6e-7))
        #expect(home.altitudeMSL == v.homeAltM && home.localX == -30 && home.localY == -40)
    }

    @Test func aPX4MAVLink1HeartbeatAndTextDecode() throws {
        let s = try MAVLinkFixtures.px4.get(), v = s.info
        let m = Self.messages(s)
        let hb = try #require(m.lazy.compactMap { if case .heartbeat(let x) = $0 { x } else { nil } }.first)
        #expect(hb.autopilot == 12 && hb.customMode == 3 << 16 && hb.modeName == "Position" && v.modeName == "Position")
        let text = try #require(m.lazy.compactMap { if case .statusText(let x) = $0 { x } else { nil } }.first)
        #expect(text.text == v.statustextFirst)
    }

    /// "Unknown" field values (common.xml: UINT16_MAX, -1, UINT8_MAX) come out as nil.
    @Test func unknownValuesAreNil() {
        func frame(_ id: UInt32, _ payload: [UInt8]) -> MAVLinkFrame {
            MAVLinkFrame(version: 2, sequence: 0, systemID: 1, componentID: 1, messageID: id, payload: payload, signed: false, raw: [])
        }
        var sys = [UInt8](repeating: 0, count: 43)
        sys[14] = 0xFF; sys[15] = 0xFF; sys[16] = 0xFF; sys[17] = 0xFF; sys[30] = 0xFF
        if case .sysStatus(let s)? = MAVLinkMessage(frame(1, sys)) {
            #expect(s.batteryVolts == nil && s.batteryAmps == nil && s.batteryRemainingPercent == nil)
        } else { Issue.record("SYS_STATUS did not decode") }
        var gps = [UInt8](repeating: 0xFF, count: 52)
        gps[28] = 3
        if case .gpsRawInt(let g)? = MAVLinkMessage(frame(24, gps)) {
            #expect(g.satellitesVisible == nil && g.hdop == nil && g.groundSpeed == nil && g.courseOverGround == nil)
        } else { Issue.record("GPS_RAW_INT did not decode") }
        if case .radioStatus(let r)? = MAVLinkMessage(frame(109, [UInt8](repeating: 0xFF, count: 9))) {
            #expect(r.rssi == nil && r.remoteRSSI == nil && r.noise == nil)
        } else { Issue.record("RADIO_STATUS did not decode") }
        #expect(MAVLinkMessage(frame(2, [])) == nil, "SYSTEM_TIME: not decoded")
        if case .statusText(let t)? = MAVLinkMessage(frame(253, [4, 0xE2, 0x82])) {
            #expect(t.text == "\u{FFFD}", "a cut UTF-8 sequence is replaced, a short payload reads as zeros")
        } else { Issue.record("STATUSTEXT did not decode") }
    }
}
