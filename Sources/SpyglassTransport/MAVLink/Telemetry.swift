/// One vehicle's state, accumulated from its MAVLink messages; every field carries the
/// monotonic arrival time (µs) of the message that last set it, so a display can age it.
///
/// It locks onto the first system whose HEARTBEAT comes from a flight controller (not a GCS,
/// MAV_TYPE_GCS = 6, and not a component with MAV_AUTOPILOT_INVALID = 8, such as a camera or
/// gimbal), and within it onto that component, preferring MAV_COMP_ID_AUTOPILOT1 (1) when it
/// speaks up. Frames of other systems are counted, not applied, except RADIO_STATUS, which
/// describes the link rather than a vehicle (SiK radios send it as their own system, 51).
/// Frames before the lock are counted too. (MAVLink microservices: Heartbeat/Connection
/// protocol, https://mavlink.io/en/services/heartbeat.html)
public struct Telemetry: Sendable {
    /// A value and the arrival time (monotonic µs) of the message that carried it.
    public struct Stamped<Value: Equatable & Sendable>: Equatable, Sendable {
        public var value: Value
        public var arrivalMicros: UInt64
        public init(_ value: Value, at arrivalMicros: UInt64) {
            self.value = value
            self.arrivalMicros = arrivalMicros
        }
    }

    /// How many frames of one message id arrived, first and last arrival (for its rate).
    public struct MessageStats: Equatable, Sendable {
        public var count = 0
        public var firstMicros: UInt64 = 0
        public var lastMicros: UInt64 = 0
        /// Messages per second over the arrivals seen; nil before two arrived.
        public var rate: Double? {
            count > 1 && lastMicros > firstMicros ? Double(count - 1) * 1e6 / Double(lastMicros - firstMicros) : nil
        }
    }

    /// The vehicle's system id and the component followed (nil until a HEARTBEAT locks them).
    public internal(set) var systemID: UInt8?, componentID: UInt8?
    /// HEARTBEAT: armed (base_mode 0x80), MAV_TYPE, MAV_AUTOPILOT, mode name (``FlightMode``).
    public internal(set) var armed: Stamped<Bool>?, vehicleType: Stamped<UInt8>?, autopilot: Stamped<UInt8>?
    public internal(set) var modeName: Stamped<String>?
    /// Volts: SYS_STATUS.voltage_battery, or BATTERY_STATUS (id 0) cell sum; the later wins.
    public internal(set) var batteryVolts: Stamped<Double>?
    /// Ratio 0...1: SYS_STATUS or BATTERY_STATUS (id 0) battery_remaining / 100; the later wins.
    public internal(set) var batteryRemaining: Stamped<Double>?
    /// Metres above home: GLOBAL_POSITION_INT.relative_alt.
    public internal(set) var altitudeAboveHome: Stamped<Double>?
    /// m/s and m/s (up positive): VFR_HUD.groundspeed and climb.
    public internal(set) var groundSpeed: Stamped<Double>?, climb: Stamped<Double>?
    /// Degrees 0...360: VFR_HUD.heading.
    public internal(set) var heading: Stamped<Double>?
    /// Radians: ATTITUDE.roll and pitch.
    public internal(set) var roll: Stamped<Double>?, pitch: Stamped<Double>?
    /// GPS_RAW_INT: GPS_FIX_TYPE (3: 3D) and satellites visible.
    public internal(set) var gpsFixType: Stamped<UInt8>?, satellites: Stamped<Int>?
    /// GLOBAL_POSITION_INT: the fused position (altitude MSL).
    public internal(set) var position: Stamped<GeoPoint>?
    /// HOME_POSITION: home (altitude MSL).
    public internal(set) var home: Stamped<GeoPoint>?
    /// RADIO_STATUS.rssi and remrssi: the radio's own units, 0...254 (SiK: about 2 per dB).
    public internal(set) var rssi: Stamped<Int>?, remoteRSSI: Stamped<Int>?
    /// Ratio 0...1: 1 - SYS_STATUS.drop_rate_comm / 100 %, the autopilot's view of its links
    /// (for links without a radio reporting RADIO_STATUS).
    public internal(set) var linkQuality: Stamped<Double>?
    /// The latest STATUSTEXT.
    public internal(set) var statusText: Stamped<MAVLinkMessage.StatusText>?
    /// Arrival of the latest frame applied (monotonic µs).
    public internal(set) var lastMessageMicros: UInt64?
    /// Frames applied, by message id.
    public internal(set) var messageStats: [UInt32: MessageStats] = [:]
    /// Frames of other systems (not applied), and frames before a vehicle's HEARTBEAT locked one.
    public internal(set) var otherVehicleFrames = 0, framesBeforeLock = 0
    /// Values dropped as impossible (a NaN or infinite float, a latitude past 90°, a battery over
    /// 100 %, an attitude past ±180°): the message's other fields are kept.
    public internal(set) var implausibleValues = 0
    /// Systems that sent a flight controller's HEARTBEAT (a RADIO_STATUS from one of them, other
    /// than the vehicle followed, is another vehicle's).
    var autopilotSystems: Set<UInt8> = []
    /// Arrivals of the first and the latest armed HEARTBEAT.
    public internal(set) var firstArmedMicros: UInt64?, lastArmedMicros: UInt64?

    public init() {}

    /// Metres from the vehicle to home (``GeoPoint/distance(to:)``), when both are known.
    public var distanceToHome: Double? {
        guard let p = position?.value, let h = home?.value else { return nil }
        return p.distance(to: h)
    }

    /// Degrees 0..<360 from true north, the initial bearing from the vehicle to home.
    public var bearingToHome: Double? {
        guard let p = position?.value, let h = home?.value else { return nil }
        return p.bearing(to: h)
    }

    /// µs since the first armed HEARTBEAT: up to `nowMicros` while armed, else to the last
    /// armed HEARTBEAT; nil when never armed.
    public func flightTimeMicros(nowMicros: UInt64) -> UInt64? {
        guard let first = firstArmedMicros else { return nil }
        let end = armed?.value == true ? nowMicros : (lastArmedMicros ?? first)
        return end > first ? end - first : 0
    }

    /// µs since the latest frame applied, or nil before one.
    public func messageAgeMicros(nowMicros: UInt64) -> UInt64? {
        lastMessageMicros.map { nowMicros > $0 ? nowMicros - $0 : 0 }
    }
}
