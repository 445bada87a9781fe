extension MAVLinkMessage {
    /// BATTERY_STATUS (MAVLink common.xml, message 147): one battery in detail.
    /// Wire order: current_consumed i32, energy_consumed i32, temperature i16, voltages u16[10],
    /// current_battery i16, id u8, battery_function u8, type u8, battery_remaining i8, then
    /// extensions time_remaining i32, charge_state u8, voltages_ext u16[4], mode u8,
    /// fault_bitmask u32 (54 bytes).
    public struct BatteryStatus: Equatable, Sendable {
        /// The battery's instance, 0 for the first.
        public var id: UInt8
        /// MAV_BATTERY_FUNCTION and MAV_BATTERY_TYPE.
        public var function: UInt8, type: UInt8
        /// Cell voltages, volts, cells 1...14 as present (voltages: UINT16_MAX is "no cell";
        /// voltages_ext: 0 is "no cell"). Without per-cell data cell 1 holds the whole pack.
        public var cellVolts: [Double]
        /// The pack's voltage, volts: the sum of ``cellVolts`` (common.xml: a pack above
        /// 65.534 V puts 65534 mV in cell 1 and the rest in cell 2); nil with no cells.
        public var totalVolts: Double? { cellVolts.isEmpty ? nil : cellVolts.reduce(0, +) }
        /// Current, amperes (from cA); nil for -1.
        public var currentAmps: Double?
        /// Charge used, mAh; nil for -1.
        public var consumedMilliampHours: Int?
        /// Energy used, joules (from hJ); nil for -1.
        public var consumedJoules: Double?
        /// Temperature, °C (from cdegC); nil for INT16_MAX.
        public var temperatureCelsius: Double?
        /// Remaining, percent 0...100; nil for -1.
        public var remainingPercent: Int?
        /// Time to empty, seconds; nil for 0 (not provided).
        public var timeRemainingSeconds: Int?
        /// MAV_BATTERY_CHARGE_STATE, MAV_BATTERY_MODE, MAV_BATTERY_FAULT bits.
        public var chargeState: UInt8, mode: UInt8, faultBitmask: UInt32

        init(_ p: MAVLinkPayload) {
            consumedMilliampHours = p.i32(0) == -1 ? nil : Int(p.i32(0))
            consumedJoules = p.i32(4) == -1 ? nil : Double(p.i32(4)) * 100
            temperatureCelsius = p.i16(8) == .max ? nil : Double(p.i16(8)) / 100
            let cells = (0..<10).map { p.u16(10 + 2 * $0) }.filter { $0 != .max }
            let extra = (0..<4).map { p.u16(41 + 2 * $0) }.filter { $0 != 0 }
            cellVolts = (cells + extra).map { Double($0) / 1000 }
            currentAmps = p.i16(30) == -1 ? nil : Double(p.i16(30)) / 100
            id = p.u8(32)
            function = p.u8(33)
            type = p.u8(34)
            remainingPercent = p.i8(35) == -1 ? nil : Int(p.i8(35))
            timeRemainingSeconds = p.i32(36) == 0 ? nil : Int(p.i32(36))
            chargeState = p.u8(40)
            mode = p.u8(49)
            faultBitmask = p.u32(50)
        }
    }
}
