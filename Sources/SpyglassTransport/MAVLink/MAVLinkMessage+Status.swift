extension MAVLinkMessage {
    /// SYS_STATUS (MAVLink common.xml, message 1): sensors, load, main battery, link errors.
    /// Wire order: 3× u32 sensor bits, load u16, voltage_battery u16, current_battery i16,
    /// drop_rate_comm u16, errors_comm u16, 4× errors_count u16, battery_remaining i8, then
    /// 3× u32 extended sensor bits (43 bytes).
    public struct SysStatus: Equatable, Sendable {
        /// MAV_SYS_STATUS_SENSOR bits present, enabled and healthy.
        public var sensorsPresent: UInt32, sensorsEnabled: UInt32, sensorsHealth: UInt32
        /// Main loop load, percent 0...100 (from d%, per mille).
        public var loadPercent: Double
        /// Battery voltage, volts (from mV); nil for UINT16_MAX (not sent).
        public var batteryVolts: Double?
        /// Battery current, amperes (from cA); nil for -1 (not measured).
        public var batteryAmps: Double?
        /// Remaining battery, percent 0...100; nil for -1 (not estimated).
        public var batteryRemainingPercent: Int?
        /// Communication drop rate, percent 0...100 (from c%: packets dropped on all links).
        public var dropRateCommPercent: Double
        /// Communication errors (dropped packets) on all links.
        public var errorsComm: UInt16

        init(_ p: MAVLinkPayload) {
            sensorsPresent = p.u32(0)
            sensorsEnabled = p.u32(4)
            sensorsHealth = p.u32(8)
            loadPercent = Double(p.u16(12)) / 10
            batteryVolts = p.u16(14) == .max ? nil : Double(p.u16(14)) / 1000
            batteryAmps = p.i16(16) == -1 ? nil : Double(p.i16(16)) / 100
            batteryRemainingPercent = p.i8(30) == -1 ? nil : Int(p.i8(30))
            dropRateCommPercent = Double(p.u16(18)) / 100
            errorsComm = p.u16(20)
        }
    }

    /// RADIO_STATUS (MAVLink common.xml, message 109): a telemetry radio's link (SiK radios send
    /// it as system 51, component 68). Wire order: rxerrors u16, fixed u16, rssi u8, remrssi u8,
    /// txbuf u8, noise u8, remnoise u8 (9 bytes).
    public struct RadioStatus: Equatable, Sendable {
        /// Local signal strength, device units 0...254 (SiK: about 2 per dB); nil for 255 (unknown).
        public var rssi: Int?
        /// The remote end's signal strength, same units; nil for 255.
        public var remoteRSSI: Int?
        /// Local background noise, same units; nil for 255.
        public var noise: Int?
        /// The remote end's noise, same units; nil for 255.
        public var remoteNoise: Int?
        /// Remaining free transmit buffer, percent.
        public var txBufferPercent: Int
        /// Receive errors, and packets corrected by error correction.
        public var rxErrors: UInt16, fixed: UInt16

        init(_ p: MAVLinkPayload) {
            func known(_ v: UInt8) -> Int? { v == .max ? nil : Int(v) }
            rxErrors = p.u16(0)
            fixed = p.u16(2)
            rssi = known(p.u8(4))
            remoteRSSI = known(p.u8(5))
            txBufferPercent = Int(p.u8(6))
            noise = known(p.u8(7))
            remoteNoise = known(p.u8(8))
        }
    }
}
