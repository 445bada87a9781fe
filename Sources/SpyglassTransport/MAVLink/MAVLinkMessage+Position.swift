extension MAVLinkMessage {
    /// GPS_RAW_INT (MAVLink common.xml, message 24): the GNSS receiver's own fix.
    /// Wire order: time_usec u64, lat i32, lon i32, alt i32, eph u16, epv u16, vel u16, cog u16,
    /// fix_type u8, satellites_visible u8, then extensions alt_ellipsoid i32, h_acc u32,
    /// v_acc u32, vel_acc u32, hdg_acc u32, yaw u16 (52 bytes).
    public struct GPSRawInt: Equatable, Sendable {
        /// µs since the Unix epoch or since boot (the sender's choice, common.xml).
        public var timeMicros: UInt64
        /// GPS_FIX_TYPE: 0 no GPS, 1 no fix, 2 2D, 3 3D, 4 DGPS, 5 RTK float, 6 RTK fixed, …
        public var fixType: UInt8
        /// Latitude and longitude, degrees (WGS-84, from degE7).
        public var latitude: Double, longitude: Double
        /// Altitude above mean sea level, metres (from mm).
        public var altitudeMSL: Double
        /// Horizontal and vertical dilution of precision (from ×100); nil for UINT16_MAX.
        public var hdop: Double?, vdop: Double?
        /// Ground speed, m/s (from cm/s); nil for UINT16_MAX.
        public var groundSpeed: Double?
        /// Course over ground, degrees 0...360 (from cdeg); nil for UINT16_MAX.
        public var courseOverGround: Double?
        /// Satellites visible; nil for 255 (unknown).
        public var satellitesVisible: Int?

        init(_ p: MAVLinkPayload) {
            func known(_ v: UInt16, _ scale: Double) -> Double? { v == .max ? nil : Double(v) / scale }
            timeMicros = p.u64(0)
            latitude = p.degE7(8)
            longitude = p.degE7(12)
            altitudeMSL = Double(p.i32(16)) / 1000
            hdop = known(p.u16(20), 100)
            vdop = known(p.u16(22), 100)
            groundSpeed = known(p.u16(24), 100)
            courseOverGround = known(p.u16(26), 100)
            fixType = p.u8(28)
            satellitesVisible = p.u8(29) == .max ? nil : Int(p.u8(29))
        }
    }

    /// GLOBAL_POSITION_INT (MAVLink common.xml, message 33): the autopilot's fused position.
    /// Wire order: time_boot_ms u32, lat i32, lon i32, alt i32, relative_alt i32, vx i16,
    /// vy i16, vz i16, hdg u16 (28 bytes).
    public struct GlobalPositionInt: Equatable, Sendable {
        /// ms since the autopilot booted.
        public var timeBootMillis: UInt32
        /// Latitude and longitude, degrees (WGS-84, from degE7).
        public var latitude: Double, longitude: Double
        /// Altitude above mean sea level, metres (from mm).
        public var altitudeMSL: Double
        /// Altitude above home, metres (from mm, relative_alt).
        public var relativeAltitude: Double
        /// Ground velocity north, east and down, m/s (from cm/s; down is positive).
        public var velocityNorth: Double, velocityEast: Double, velocityDown: Double
        /// Heading (yaw), degrees 0...360 (from cdeg); nil for UINT16_MAX.
        public var heading: Double?

        init(_ p: MAVLinkPayload) {
            timeBootMillis = p.u32(0)
            latitude = p.degE7(4)
            longitude = p.degE7(8)
            altitudeMSL = Double(p.i32(12)) / 1000
            relativeAltitude = Double(p.i32(16)) / 1000
            velocityNorth = Double(p.i16(20)) / 100
            velocityEast = Double(p.i16(22)) / 100
            velocityDown = Double(p.i16(24)) / 100
            heading = p.u16(26) == .max ? nil : Double(p.u16(26)) / 100
        }
    }

    /// HOME_POSITION (MAVLink common.xml, message 242): where the vehicle returns to.
    /// Wire order: latitude i32, longitude i32, altitude i32, x, y, z f32, q f32[4],
    /// approach_x, approach_y, approach_z f32, then extension time_usec u64 (60 bytes).
    public struct HomePosition: Equatable, Sendable {
        /// Latitude and longitude, degrees (WGS-84, from degE7).
        public var latitude: Double, longitude: Double
        /// Altitude above mean sea level, metres (from mm).
        public var altitudeMSL: Double
        /// Home in the local frame (NED), metres.
        public var localX: Float, localY: Float, localZ: Float
        /// µs since the Unix epoch or boot; 0 when not sent.
        public var timeMicros: UInt64

        init(_ p: MAVLinkPayload) {
            latitude = p.degE7(0)
            longitude = p.degE7(4)
            altitudeMSL = Double(p.i32(8)) / 1000
            localX = p.f32(12)
            localY = p.f32(16)
            localZ = p.f32(20)
            timeMicros = p.u64(52)
        }
    }
}
