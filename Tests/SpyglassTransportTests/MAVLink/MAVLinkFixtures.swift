import Foundation
@testable import SpyglassTransport

/// MAVLink streams made by tools/mavlink-vehicle (pymavlink, in out/venv) and what the vehicle
/// says it sent. Without out/venv the tests fail, saying to run tools/setup.
enum MAVLinkFixtures {
    /// The package root (…/Tests/SpyglassTransportTests/MAVLink/MAVLinkFixtures.swift → root).
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()
    static let python = root.appendingPathComponent("out/venv/bin/python").path
    static let vehicleScript = root.appendingPathComponent("tools/mavlink-vehicle").path

    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    /// ArduCopter over MAVLink 2, 61 ticks (7 seconds' HEARTBEATs, 3 STATUSTEXTs).
    static let ardupilot = Result { try vehicle(["--count", "61"]) }
    /// PX4 over MAVLink 1, 31 ticks.
    static let px4 = Result { try vehicle(["--autopilot", "px4", "--mavlink1", "--count", "31"]) }
    /// ArduCopter over MAVLink 2, signed, 31 ticks.
    static let signed = Result { try vehicle(["--signing", "--count", "31"]) }

    /// Runs tools/mavlink-vehicle `--out FILE` with `args` (and `--tlog FILE` when `tlog`).
    static func vehicle(_ args: [String], tlog: Bool = false) throws -> VehicleStream {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("mavlink-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let out = dir.appendingPathComponent("frames.bin"), log = dir.appendingPathComponent("frames.tlog")
        let extra = ["--out", out.path] + (tlog ? ["--tlog", log.path] : [])
        let json = try run([vehicleScript] + args + extra)
        let info = try JSONDecoder.snake.decode(VehicleInfo.self, from: json)
        let bytes = try [UInt8](Data(contentsOf: out))
        let tlogBytes = tlog ? try [UInt8](Data(contentsOf: log)) : []
        return VehicleStream(bytes: bytes, info: info, tlog: tlogBytes)
    }

    /// Runs out/venv/bin/python with `args`; its stdout, or a failure naming tools/setup.
    static func run(_ args: [String]) throws -> Data {
        guard FileManager.default.isExecutableFile(atPath: python) else {
            throw Failure(description: "\(python) is missing: run tools/setup (it makes out/venv with pymavlink)")
        }
        let p = Process()
        p.executableURL = URL(fileURLWithPath: python)
        p.arguments = args
        let errPath = FileManager.default.temporaryDirectory.appendingPathComponent("mavlink-\(UUID().uuidString).err")
        _ = FileManager.default.createFile(atPath: errPath.path, contents: nil)
        defer { try? FileManager.default.removeItem(at: errPath) }
        let out = Pipe()
        p.standardOutput = out
        p.standardError = try FileHandle(forWritingTo: errPath)
        p.standardInput = FileHandle.nullDevice
        try p.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        guard p.terminationStatus == 0 else {
            let err = (try? String(contentsOf: errPath, encoding: .utf8)) ?? ""
            throw Failure(description: "python \(args.joined(separator: " ")) exited \(p.terminationStatus): \(err)")
        }
        return data
    }

    /// Every frame of `bytes`, pushed at once.
    static func frames(_ bytes: [UInt8]) -> [MAVLinkFrame] {
        var parser = MAVLinkParser()
        return parser.push(bytes)
    }

    /// A frame with a good CRC for `crcExtra` (for the cases pymavlink will not make).
    static func encode(v2: Bool = true, id: UInt32, payload: [UInt8], crcExtra: UInt8, flags: UInt8 = 0,
                       system: UInt8 = 1, component: UInt8 = 1, sequence: UInt8 = 0) -> [UInt8] {
        let header: [UInt8] = v2
            ? [0xFD, UInt8(payload.count), flags, 0, sequence, system, component,
               UInt8(id & 0xFF), UInt8(id >> 8 & 0xFF), UInt8(id >> 16 & 0xFF)]
            : [0xFE, UInt8(payload.count), sequence, system, component, UInt8(id & 0xFF)]
        let crc = MAVLinkCRC.checksum(header.dropFirst() + payload, extra: crcExtra)
        return header + payload + [UInt8(crc & 0xFF), UInt8(crc >> 8)]
    }
}

extension JSONDecoder {
    static var snake: JSONDecoder {
        let d = JSONDecoder()
        d.keyDecodingStrategy = .convertFromSnakeCase
        return d
    }
}

/// A stream of frames and the vehicle's description of it.
struct VehicleStream: Sendable {
    let bytes: [UInt8]
    let info: VehicleInfo
    /// The .tlog pymavlink wrote of the same frames (with `tlog: true`).
    let tlog: [UInt8]
}

/// What tools/mavlink-vehicle prints first (its JSON, snake_case keys).
struct VehicleInfo: Decodable, Sendable {
    struct Final: Decodable, Sendable {
        let counts: [String: Int]
        let relativeAltM: Double
        let statustext: String?
    }
    let autopilot: String, mavlink: Int, signed: Bool, systemId: Int, componentId: Int
    let autopilotId: Int, vehicleType: Int, customMode: UInt32, modeName: String, baseMode: Int, armed: Bool
    let rateHz: Double, ticks: Int?
    let batteryVolts: Double, batteryRemainingPercent: Int, batteryCurrentAmps: Double, dropRateCommPercent: Double
    let relativeAltM: Double, climbMps: Double, groundSpeedMps: Double, airspeedMps: Double, headingDeg: Int
    let rollRad: Double, pitchRad: Double, yawRad: Double
    let latDeg: Double, lonDeg: Double, altMslM: Double, homeLatDeg: Double, homeLonDeg: Double, homeAltM: Double
    let distanceToHomeM: Double, bearingToHomeDeg: Double
    let gpsFixType: Int, satellites: Int, gpsHdop: Double, rssi: Int, remrssi: Int, noise: Int, remnoise: Int
    let statustextFirst: String, statustextSeverity: Int
    let final: Final?
}
