extension MAVLinkMessage {
    /// ATTITUDE (MAVLink common.xml, message 30): orientation and body rates.
    /// Wire order: time_boot_ms u32, roll, pitch, yaw, rollspeed, pitchspeed, yawspeed f32 (28 bytes).
    public struct Attitude: Equatable, Sendable {
        /// ms since the autopilot booted.
        public var timeBootMillis: UInt32
        /// Roll, pitch and yaw, radians (-π...π).
        public var roll: Double, pitch: Double, yaw: Double
        /// Body rates, rad/s.
        public var rollSpeed: Double, pitchSpeed: Double, yawSpeed: Double

        init(_ p: MAVLinkPayload) {
            timeBootMillis = p.u32(0)
            roll = Double(p.f32(4))
            pitch = Double(p.f32(8))
            yaw = Double(p.f32(12))
            rollSpeed = Double(p.f32(16))
            pitchSpeed = Double(p.f32(20))
            yawSpeed = Double(p.f32(24))
        }
    }

    /// VFR_HUD (MAVLink common.xml, message 74): what a HUD shows.
    /// Wire order: airspeed, groundspeed, alt, climb f32, heading i16, throttle u16 (20 bytes).
    public struct VFRHUD: Equatable, Sendable {
        /// Airspeed and ground speed, m/s.
        public var airspeed: Double, groundSpeed: Double
        /// Altitude above mean sea level, metres.
        public var altitudeMSL: Double
        /// Climb rate, m/s (up is positive).
        public var climb: Double
        /// Heading, whole degrees 0...360 (compass).
        public var heading: Int
        /// Throttle, percent 0...100.
        public var throttlePercent: Int

        init(_ p: MAVLinkPayload) {
            airspeed = Double(p.f32(0))
            groundSpeed = Double(p.f32(4))
            altitudeMSL = Double(p.f32(8))
            climb = Double(p.f32(12))
            heading = Int(p.i16(16))
            throttlePercent = Int(p.u16(18))
        }
    }
}
