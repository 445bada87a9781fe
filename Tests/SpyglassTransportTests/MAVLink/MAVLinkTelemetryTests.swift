import Foundation
import Testing
@testable import SpyglassTransport

/// The vehicle state accumulated from pymavlink streams, checked against what the simulated
/// vehicle says it sent.
@Suite struct MAVLinkTelemetryTests {
    /// Applies `frames` at their tick's time, 100 ms a tick from 1 s: a tick is its
    /// once-a-second messages, then ATTITUDE, GLOBAL_POSITION_INT, VFR_HUD and STATUSTEXT.
    static func apply(_ frames: [MAVLinkFrame], to t: inout Telemetry) {
        var attitudes = 0
        for f in frames {
            if f.messageID == MAVLinkMessage.ID.attitude { attitudes += 1 }
            let tick = [30, 33, 74, 253].contains(f.messageID) ? attitudes - 1 : attitudes
            t.apply(f, arrivalMicros: 1_000_000 + UInt64(max(0, tick)) * 100_000)
        }
    }

    @Test func anArduPilotStreamFillsTheTelemetry() throws {
        let s = try MAVLinkFixtures.ardupilot.get(), v = s.info
        let final = try #require(v.final)
        var t = Telemetry()
        Self.apply(MAVLinkFixtures.frames(s.bytes), to: &t)
        let last: UInt64 = 1_000_000 + 60 * 100_000
        #expect(t.systemID == 1 && t.componentID == 1 && t.armed?.value == true && t.modeName?.value == "LOITER")
        #expect(t.vehicleType?.value == 2 && t.autopilot?.value == 3 && t.modeName?.arrivalMicros == 7_000_000)
        #expect(MAVLinkMessageTests.near(t.batteryVolts?.value, v.batteryVolts, 0.0005))
        #expect(t.batteryRemaining?.value == 0.76)
        #expect(MAVLinkMessageTests.near(t.altitudeAboveHome?.value, final.relativeAltM, 0.0005))
        #expect(t.altitudeAboveHome?.arrivalMicros == last)
        #expect(MAVLinkMessageTests.near(t.groundSpeed?.value, v.groundSpeedMps, 1e-6) && t.heading?.value == 123)
        #expect(MAVLinkMessageTests.near(t.climb?.value, v.climbMps, 1e-7))
        #expect(MAVLinkMessageTests.near(t.roll?.value, v.rollRad, 1e-7) && MAVLinkMessageTests.near(t.pitch?.value, v.pitchRad, 1e-7))
        #expect(t.gpsFixType?.value == 3 && t.satellites?.value == 14)
        #expect(MAVLinkMessageTests.near(t.position?.value.latitude, v.latDeg, 0.6e-7))
        #expect(MAVLinkMessageTests.near(t.home?.value.longitude, v.homeLonDeg, 0.6e-7) && t.home?.value.altitudeMSL == 488)
        #expect(MAVLinkMessageTests.near(t.distanceToHome, v.distanceToHomeM, 0.05), "50 m, within degE7's 1 cm")
        #expect(MAVLinkMessageTests.near(t.bearingToHome, v.bearingToHomeDeg, 0.05))
        #expect(t.rssi?.value == 180 && t.remoteRSSI?.value == 170)
        #expect(MAVLinkMessageTests.near(t.linkQuality?.value, 0.985, 1e-12))
        #expect(t.statusText?.value.text == final.statustext && t.statusText?.arrivalMicros == 7_000_000)
        #expect(t.lastMessageMicros == last && t.messageAgeMicros(nowMicros: last + 250_000) == 250_000)
        #expect(t.flightTimeMicros(nowMicros: last) == last - 1_000_000)
        #expect(t.messageStats.mapValues(\.count) == Dictionary(uniqueKeysWithValues: final.counts.map { (UInt32($0.key) ?? 0, $0.value) }))
        #expect(MAVLinkMessageTests.near(t.messageStats[30]?.rate, 10, 1e-9) && MAVLinkMessageTests.near(t.messageStats[0]?.rate, 1, 1e-9))
        #expect(t.otherVehicleFrames == 0 && t.framesBeforeLock == 0)
    }

    @Test func aPX4StreamShowsPositionMode() throws {
        var t = Telemetry()
        Self.apply(MAVLinkFixtures.frames(try MAVLinkFixtures.px4.get().bytes), to: &t)
        #expect(t.modeName?.value == "Position" && t.autopilot?.value == 12 && t.armed?.value == true)
    }

    @Test func theFirstVehicleIsShownAndASecondCounted() throws {
        let one = MAVLinkFixtures.frames(try MAVLinkFixtures.ardupilot.get().bytes)
        let two = MAVLinkFixtures.frames(try MAVLinkFixtures.vehicle(["--autopilot", "px4", "--sysid", "2", "--count", "20"]).bytes)
        var mixed: [MAVLinkFrame] = []
        for i in 0..<max(one.count, two.count) {
            if i < one.count { mixed.append(one[i]) }
            if i < two.count { mixed.append(two[i]) }
        }
        var stream = MAVLinkParser()
        #expect(stream.push(mixed.flatMap(\.raw)) == mixed, "two vehicles' frames on one stream")
        var t = Telemetry()
        Self.apply(mixed, to: &t)
        #expect(t.systemID == 1 && t.modeName?.value == "LOITER")
        // A second flight controller's RADIO_STATUS is its own link's, not ours: all of its
        // frames are counted (a SiK radio's, from a system with no autopilot heartbeat, is taken).
        #expect(t.otherVehicleFrames == two.count, "\(t.otherVehicleFrames) of \(two.count)")
    }

    @Test func aGCSHeartbeatNeitherLocksNorApplies() throws {
        let s = try MAVLinkFixtures.vehicle(["--gcs-heartbeat", "--count", "25"])
        let frames = MAVLinkFixtures.frames(s.bytes)
        #expect(frames.first?.systemID == 255)
        var t = Telemetry()
        Self.apply(frames, to: &t)
        #expect(t.systemID == 1 && t.framesBeforeLock == 1 && t.otherVehicleFrames == 2)
        #expect(t.vehicleType?.value == 2)
    }

    /// A flight controller on component 1 takes over from another one that spoke first.
    @Test func componentOneIsPreferred() throws {
        let other = MAVLinkFixtures.frames(try MAVLinkFixtures.vehicle(["--compid", "191", "--count", "11"]).bytes)
        let autopilot = MAVLinkFixtures.frames(try MAVLinkFixtures.vehicle(["--autopilot", "px4", "--count", "11"]).bytes)
        var t = Telemetry()
        Self.apply(other + autopilot, to: &t)
        #expect(t.componentID == 1 && t.modeName?.value == "Position")
        var only = Telemetry()
        Self.apply(other, to: &only)
        #expect(only.componentID == 191 && only.modeName?.value == "LOITER")
    }

    @Test func flightTimeRunsWhileArmedAndStopsWhenDisarmed() {
        func heartbeat(armed: Bool) -> MAVLinkFrame {
            let raw = MAVLinkFixtures.encode(id: 0, payload: [5, 0, 0, 0, 2, 3, armed ? 0x81 : 0x01, 4, 3], crcExtra: 50)
            var p = MAVLinkParser()
            return p.push(raw)[0]
        }
        var t = Telemetry()
        t.apply(heartbeat(armed: false), arrivalMicros: 1_000_000)
        #expect(t.flightTimeMicros(nowMicros: 2_000_000) == nil)
        t.apply(heartbeat(armed: true), arrivalMicros: 3_000_000)
        t.apply(heartbeat(armed: true), arrivalMicros: 4_000_000)
        #expect(t.flightTimeMicros(nowMicros: 4_500_000) == 1_500_000)
        t.apply(heartbeat(armed: false), arrivalMicros: 5_000_000)
        #expect(t.flightTimeMicros(nowMicros: 9_000_000) == 1_000_000, "to the last armed heartbeat")
    }

    @Test func greatCircleDistanceAndBearing() {
        let origin = GeoPoint(latitude: 0, longitude: 0)
        #expect(abs(origin.distance(to: GeoPoint(latitude: 0, longitude: 1)) - 111_195.08) < 0.01, "R·π/180")
        #expect(origin.bearing(to: GeoPoint(latitude: 1, longitude: 0)) == 0)
        #expect(abs(origin.bearing(to: GeoPoint(latitude: 0, longitude: 1)) - 90) < 1e-9)
        #expect(abs(origin.bearing(to: GeoPoint(latitude: -1, longitude: -1e-9)) - 180) < 1e-6)
        #expect(abs(origin.bearing(to: GeoPoint(latitude: 0, longitude: -1)) - 270) < 1e-9)
        #expect(origin.distance(to: origin) == 0 && origin.bearing(to: origin) == 0)
    }
}
